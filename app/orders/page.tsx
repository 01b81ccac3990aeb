import type { Metadata } from "next";
import Link from "next/link";
import { connection } from "next/server";
import { OrdersLedger } from "@/components/ledger/OrdersLedger";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader } from "@/components/shop/SiteHeader";
import { ordersPageView } from "@/lib/pages/orders";

export const metadata: Metadata = { title: "Your orders · OncePay Coffee Supply" };

export default async function OrdersPage({ searchParams }: PageProps<"/orders">) {
  await connection();
  const view = await ordersPageView(await searchParams);
  return (
    <>
      <SiteHeader current="orders" skipTo={{ href: "#orders", label: "Skip to your orders" }} />
      <main id="orders" className="mx-auto w-full max-w-4xl px-4 pb-16 pt-6 sm:px-6 lg:px-8">
        <p className="text-xs font-semibold uppercase tracking-[0.16em] text-clay">The ledger</p>
        <h1 className="mt-1 font-display text-3xl font-semibold text-espresso sm:text-4xl">
          Your orders
        </h1>
        <p className="mt-2 max-w-2xl text-base leading-relaxed text-mocha">
          Newest first, grouped by purchase (the cart paid for), each order with the Idempotency-Key
          it was made under, its shipment checked against its payment, and its refunds, and each
          purchase with the number of charges the payment provider holds for it. Charges and refunds
          alike are checked against the provider&apos;s own records.
        </p>
        {view.kind === "page" && (
          <OrdersLedger
            purchases={view.purchases}
            hasMore={view.hasMore}
            limit={view.limit}
            first={view.first}
          />
        )}
        {view.kind === "no-account" && (
          <p className="mt-6 rounded-2xl border border-sand bg-white p-6 text-mocha">
            No orders yet: this browser has not paid for anything.
          </p>
        )}
        {view.kind === "bad-query" && (
          <p role="alert" className="mt-6 rounded-2xl bg-berry-soft p-6 text-espresso">
            This page of orders does not exist ({view.detail}).{" "}
            <Link href="/orders" className="font-semibold text-clay underline">
              See the newest orders
            </Link>
            .
          </p>
        )}
      </main>
      <SiteFooter />
    </>
  );
}
