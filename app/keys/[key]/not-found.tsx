import Link from "next/link";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader } from "@/components/shop/SiteHeader";

export default function KeyNotFound() {
  return (
    <>
      <SiteHeader current="key" skipTo={{ href: "#key", label: "Skip to the message" }} />
      <main id="key" className="mx-auto max-w-3xl px-4 pb-16 pt-10 sm:px-6 lg:px-8">
        <h1 className="font-display text-3xl font-semibold text-espresso">No such key</h1>
        <p className="mt-3 text-mocha" data-testid="key-not-found">
          This browser has no Idempotency-Key by that name. Keys belong to the browser that sent
          them, and each is deleted a day after it was first sent.
        </p>
        <Link
          href="/orders"
          className="mt-5 inline-block font-semibold text-clay underline underline-offset-2"
        >
          See your orders
        </Link>
      </main>
      <SiteFooter />
    </>
  );
}
