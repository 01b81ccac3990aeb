import type { Metadata } from "next";
import { connection } from "next/server";
import { StrategyLab } from "@/components/lab/StrategyLab";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader } from "@/components/shop/SiteHeader";
import { labPageConfig } from "@/lib/pages/lab";

export const metadata: Metadata = { title: "Strategy lab · OncePay Coffee Supply" };

// Per request: the page carries its CSP nonce and, on a first visit, a session (proxy.ts).
export default async function LabPage() {
  await connection();
  const config = labPageConfig();
  return (
    <>
      <SiteHeader current="lab" skipTo={{ href: "#lab", label: "Skip to the lab" }} />
      <main id="lab">
        <StrategyLab {...config} />
      </main>
      <SiteFooter />
    </>
  );
}
