import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";

const eslintConfig = [
  ...nextCoreWebVitals,
  ...nextTypescript,
  {
    // The lab's broken strategies must fail for want of a key, not because
    // they borrowed half of the key machinery (DESIGN.md: "It shares no code
    // path with the idempotency layer"). Pricing, order writing and the
    // payment provider are shared on purpose.
    files: ["lib/lab/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@/lib/idempotency", "@/lib/idempotency/*", "**/idempotency/*"],
              message:
                "lib/lab shows what goes wrong WITHOUT an Idempotency-Key, so it must share no code path with the idempotency layer. Use lib/http (problems, JSON responses) instead.",
            },
          ],
        },
      ],
    },
  },
  {
    ignores: ["node_modules/**", ".next/**", "lib/generated/**", "next-env.d.ts", "test-results/**", "playwright-report/**", "e2e/artifacts/**"],
  },
];

export default eslintConfig;
