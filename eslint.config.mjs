import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";

const eslintConfig = [
  ...nextCoreWebVitals,
  ...nextTypescript,
  {
    ignores: ["node_modules/**", ".next/**", "lib/generated/**", "next-env.d.ts", "test-results/**", "playwright-report/**", "e2e/artifacts/**"],
  },
];

export default eslintConfig;
