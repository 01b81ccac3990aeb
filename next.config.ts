import type { NextConfig } from "next";
import { TYPES_CHECKED_ENV } from "./lib/build/types-checked";
import { SECURITY_HEADERS } from "./lib/http/security-headers";

const nextConfig: NextConfig = {
  // The server's own responses identify OncePay, not the framework.
  poweredByHeader: false,
  // Compression is the balancer's job (lib/cluster/haproxy.ts), not each
  // instance's: Next's gzip, on responses mostly under 1 KiB, took about a
  // tenth of an instance's CPU per replay (README, Performance).
  compress: false,
  // The launcher binds to 127.0.0.1 by default; let the dev server's own
  // scripts load from that origin too.
  allowedDevOrigins: ["127.0.0.1"],
  // Loaded at run time from node_modules rather than bundled: pg has optional
  // native parts, and prom-client keeps its registry in module state that
  // must be one per process.
  serverExternalPackages: ["pg", "prom-client"],
  // `npm test` type-checks the whole project (tsc, its first phase) before it
  // builds; checking the same files again inside the build took 25 to 45 s
  // of each run. Every other build checks its types as usual.
  typescript: { ignoreBuildErrors: process.env[TYPES_CHECKED_ENV] === "1" },
  // Pages add their per-request Content-Security-Policy in proxy.ts.
  async headers() {
    return [
      {
        source: "/:path*",
        headers: Object.entries(SECURITY_HEADERS).map(([key, value]) => ({ key, value })),
      },
    ];
  },
};

export default nextConfig;
