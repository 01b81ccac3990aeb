import { connection } from "next/server";
import { CATALOG } from "@/lib/orders/catalog";
import { Hero } from "@/components/shop/Hero";
import { Shop } from "@/components/shop/Shop";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader } from "@/components/shop/SiteHeader";

// Rendered per request, although the catalog is static: each response
// carries its own CSP nonce and, on a first visit, a session cookie, and
// neither may be cached and handed to the next visitor (proxy.ts).
export default async function HomePage() {
  await connection();
  return (
    <>
      <SiteHeader />
      <main>
        <Hero />
        <Shop products={CATALOG} />
      </main>
      <SiteFooter />
    </>
  );
}
