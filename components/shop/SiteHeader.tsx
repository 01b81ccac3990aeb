import Link from "next/link";
import { LogoMark } from "@/components/ui/Logo";
import { BagIcon } from "@/components/ui/icons";

/** The page the header is on, marked in its navigation (null: none of them, as on a 404). */
export type SitePage = "shop" | "lab" | "orders" | "key" | "api";

const NAV: { page: SitePage; href: string; label: string }[] = [
  { page: "shop", href: "/#products", label: "Shop" },
  { page: "lab", href: "/lab", label: "Strategy lab" },
  { page: "orders", href: "/orders", label: "Orders" },
  { page: "api", href: "/docs/api", label: "API" },
];

export function SiteHeader({
  current = "shop",
  skipTo = { href: "#products", label: "Skip to the shop" },
}: {
  current?: SitePage | null;
  skipTo?: { href: string; label: string };
}) {
  return (
    <>
      <a
        href={skipTo.href}
        className="sr-only focus:not-sr-only focus:absolute focus:left-4 focus:top-4 focus:z-50 focus:rounded-lg focus:bg-white focus:px-4 focus:py-2 focus:text-espresso focus:shadow"
      >
        {skipTo.label}
      </a>
      <p className="bg-roast px-4 py-2 text-center text-xs font-medium tracking-wide text-cream">
        Demo shop · test cards only · no real charges
      </p>
      <header className="border-b border-sand bg-cream">
        <div className="mx-auto flex max-w-7xl flex-wrap items-center justify-between gap-x-6 gap-y-3 px-4 py-4 sm:px-6 lg:px-8">
          <Link href="/" className="flex items-center gap-3 rounded-lg">
            <LogoMark size={44} />
            <span>
              <span className="block font-display text-xl font-semibold leading-tight text-espresso sm:text-2xl">
                OncePay Coffee Supply
              </span>
              <span className="block text-sm text-mocha">Every order is charged exactly once.</span>
            </span>
          </Link>
          <nav aria-label="Main">
            <ul className="flex flex-wrap items-center gap-0.5 text-sm font-medium sm:gap-1">
              {NAV.map(({ page, href, label }) => (
                <li key={page}>
                  <Link
                    href={href}
                    aria-current={current === page ? "page" : undefined}
                    className={`rounded-full px-2 py-2 text-espresso hover:bg-oat sm:px-3 ${current === page ? "bg-oat font-semibold" : ""}`}
                  >
                    {label}
                  </Link>
                </li>
              ))}
              <li>
                <Link
                  href="/#cart"
                  className="inline-flex items-center gap-1.5 rounded-full bg-white px-3 py-2 text-espresso ring-1 ring-sand hover:bg-oat"
                >
                  <BagIcon width={16} height={16} />
                  Cart
                </Link>
              </li>
            </ul>
          </nav>
        </div>
      </header>
    </>
  );
}
