import { CATALOG } from "@/lib/orders/catalog";
import { Hero } from "@/components/shop/Hero";
import { Shop } from "@/components/shop/Shop";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader } from "@/components/shop/SiteHeader";

// The catalog is static, so the page is too; the session cookie comes from proxy.ts.
export default function HomePage() {
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
