import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { connection } from "next/server";
import { KeyInspector } from "@/components/ledger/KeyInspector";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader } from "@/components/shop/SiteHeader";
import { keyPageView } from "@/lib/pages/key";

export const metadata: Metadata = { title: "An Idempotency-Key · OncePay Coffee Supply" };

export default async function KeyPage({ params }: PageProps<"/keys/[key]">) {
  await connection();
  const { key } = await params;
  const inspection = await keyPageView(key);
  // Another browser's key is as absent as one that never was.
  if (!inspection) notFound();
  return (
    <>
      <SiteHeader current="key" skipTo={{ href: "#key", label: "Skip to the key" }} />
      <main id="key" className="mx-auto w-full max-w-3xl px-4 pb-16 pt-6 sm:px-6 lg:px-8">
        <Link
          href="/orders"
          className="text-sm font-semibold text-clay underline underline-offset-2"
        >
          ← Your orders
        </Link>
        <p className="mt-4 text-xs font-semibold uppercase tracking-[0.16em] text-clay">
          Idempotency-Key
        </p>
        <h1
          className="mt-1 break-all font-mono text-xl font-semibold text-espresso sm:text-2xl"
          data-testid="key-name"
        >
          {inspection.key}
        </h1>
        <KeyInspector inspection={inspection} />
      </main>
      <SiteFooter />
    </>
  );
}
