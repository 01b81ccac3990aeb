import Link from "next/link";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader, type SitePage } from "@/components/shop/SiteHeader";

const WAYS_ON = [
  { href: "/", title: "The shop", text: "Coffee gear, and a checkout that charges once." },
  { href: "/orders", title: "Your orders", text: "The ledger: each order, its key, its charges." },
  { href: "/docs/api", title: "The API reference", text: "Every operation, with examples." },
] as const;

/** A page that is not there, in the shop's own look: what happened, and the ways on. */
export function NotFoundPage({
  current = null,
  title,
  children,
}: {
  current?: SitePage | null;
  title: string;
  children: React.ReactNode;
}) {
  return (
    <>
      <SiteHeader current={current} skipTo={{ href: "#not-found", label: "Skip to the message" }} />
      <main
        id="not-found"
        className="mx-auto w-full max-w-3xl px-4 pb-16 pt-10 sm:px-6 lg:px-8"
        data-testid="not-found"
      >
        <p className="text-xs font-semibold uppercase tracking-[0.16em] text-clay">
          404 · Not found
        </p>
        <h1 className="mt-1 font-display text-3xl font-semibold text-espresso sm:text-4xl">
          {title}
        </h1>
        <div className="mt-3 max-w-2xl leading-relaxed text-mocha">{children}</div>
        <nav aria-label="Ways on" className="mt-8">
          <ul className="grid gap-3 sm:grid-cols-3">
            {WAYS_ON.map((way) => (
              <li key={way.href}>
                <Link
                  href={way.href}
                  className="block h-full rounded-2xl border border-sand bg-white p-4 hover:border-clay hover:bg-oat"
                >
                  <span className="block font-semibold text-espresso">{way.title}</span>
                  <span className="mt-1 block text-sm text-mocha">{way.text}</span>
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      </main>
      <SiteFooter />
    </>
  );
}
