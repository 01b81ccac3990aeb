import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";

// Test support (lib/testing: the app as a child process, raw HTTP, direct
// database checks, the Playwright wiring) is for tests only: production code
// that imported it would ship test helpers, or start depending on them. A
// relative import of any folder named testing is refused too, so helpers do
// not creep back beside the code they test (as lib/payments/simulator/
// testing.ts once did). Allowed to import it: tests (*.test.ts), lib/testing
// itself, e2e/, playwright.config.ts, vitest.config.mts, and bench/, but
// bench/ only lib/testing/app-server and lib/testing/soak/: the benchmark
// starts the built app the way the tests do and measures it over HTTP with
// its own client, and the soak is a test too long for the suite (which runs
// a short one).
const testSupportImports = {
  regex: "^(@/lib/testing|(\\.\\.?/)+(lib/)?testing)(/|$)",
  message:
    "lib/testing is test support: production code must not import it. Tests, lib/testing, e2e/ and the test runners' configs may.",
};
const benchTestSupportImports = {
  regex: "^(@/lib/testing|(\\.\\.?/)+(lib/)?testing)(/(?!(app-server|soak/[a-z-]+)(\\.ts)?$)|$)",
  message:
    "bench/ may use lib/testing/app-server (it starts the built app as the tests do) and lib/testing/soak/, and nothing else of the test support.",
};
// The lab's broken strategies must fail for want of a key, not because
// they borrowed half of the key machinery (DESIGN.md: "It shares no code
// path with the idempotency layer"). Pricing, order writing and the
// payment provider are shared on purpose.
const labImports = {
  // Our own lib/idempotency, by alias or by path, and the engine's package
  // but for what only reads a request (its /request and /headers); a
  // package that happens to be named idempotency (Powertools', which the lab
  // runs as a copied design) is not it.
  regex:
    "^(@/lib/idempotency|(\\.\\.?/)+(lib/)?idempotency)(/|$)|^@oncepay/idempotency(/(?!(request|headers)$).*)?$",
  message:
    "lib/lab shows what goes wrong WITHOUT an Idempotency-Key, so it must share no code path with the idempotency layer. Use lib/http (problems, JSON responses) instead.",
};
// The composition root (lib/services.ts) builds everything, the idempotency
// layer included. Only the modules that answer requests (lib/api, lib/pages)
// and the background work ask it for their parts, and they hand each module
// below them what it needs, so no other module reaches past its own
// dependencies through it.
const servicesImports = {
  regex: "^(@/lib/services|(\\.\\.?/)+(lib/)?services)$",
  message:
    "lib/services is the composition root: only lib/api, lib/pages and lib/background.ts ask it for their parts. Take what this module needs as arguments.",
};
// The engine is a package people install: it may import nothing of the
// shop, by the app's alias or by a path that climbs three folders, which
// from any of its files leaves the package (its own test,
// packages/idempotency/test/boundary.test.ts, resolves every import).
const packageBoundaryImports = {
  regex: "^(@/|(\\.\\./){3,})",
  message:
    "packages/idempotency is installed on its own: it imports nothing of the shop. Take what it needs as a parameter, or move the code into the package.",
};
const restrictImports = (...patterns) => ({ "no-restricted-imports": ["error", { patterns }] });

const eslintConfig = [
  ...nextCoreWebVitals,
  ...nextTypescript,
  {
    files: ["**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}"],
    ignores: [
      "**/*.test.ts",
      "**/*.test.tsx",
      "lib/testing/**",
      "e2e/**",
      "playwright.config.ts",
      "vitest.config.mts",
      "bench/**",
    ],
    rules: restrictImports(testSupportImports),
  },
  { files: ["bench/**"], rules: restrictImports(benchTestSupportImports) },
  {
    files: ["lib/**"],
    ignores: [
      "**/*.test.ts",
      "**/*.test.tsx",
      "lib/testing/**",
      "lib/api/**",
      "lib/pages/**",
      "lib/background.ts",
      "lib/services.ts",
    ],
    rules: restrictImports(testSupportImports, servicesImports),
  },
  // A file gets only the last matching options of a rule, so lib/lab's
  // production files list both boundaries; its tests keep the lab's alone.
  { files: ["lib/lab/**"], rules: restrictImports(labImports, servicesImports) },
  {
    files: ["lib/lab/**"],
    ignores: ["**/*.test.ts"],
    rules: restrictImports(labImports, servicesImports, testSupportImports),
  },
  { files: ["packages/idempotency/**"], rules: restrictImports(packageBoundaryImports) },
  {
    ignores: [
      "packages/*/dist/**",
      "packages/*/test/prisma/generated/**",
      "node_modules/**",
      ".next/**",
      "lib/generated/**",
      "next-env.d.ts",
      "test-results/**",
      "playwright-report/**",
      "e2e/artifacts/**",
    ],
  },
];

export default eslintConfig;
