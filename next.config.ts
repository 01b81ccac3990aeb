import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // The server's own responses identify OncePay, not the framework.
  poweredByHeader: false,
  // pg is loaded at run time from node_modules rather than bundled: it has
  // optional native parts that bundlers should not try to resolve.
  serverExternalPackages: ["pg"],
};

export default nextConfig;
