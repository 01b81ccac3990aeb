import type { Metadata } from "next";
import Link from "next/link";
import { connection } from "next/server";
import { ProblemActionBadge } from "@/components/docs/ProblemAction";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader } from "@/components/shop/SiteHeader";
import { problemIndexView } from "@/lib/pages/problems";

export const metadata: Metadata = { title: "Problems the API answers · OncePay Coffee Supply" };

// Per request: the page carries its CSP nonce (proxy.ts).
export default async function ProblemsPage() {
  await connection();
  const groups = problemIndexView();
  return (
    <>
      <SiteHeader current={null} skipTo={{ href: "#problems", label: "Skip to the problems" }} />
      <main id="problems" className="mx-auto w-full max-w-4xl px-4 pb-16 pt-6 sm:px-6 lg:px-8">
        <p className="text-xs font-semibold uppercase tracking-[0.16em] text-clay">API</p>
        <h1 className="mt-1 font-display text-3xl font-semibold text-espresso sm:text-4xl">
          Problems the API answers
        </h1>
        <p className="mt-2 max-w-3xl text-lg leading-relaxed text-espresso">
          Each error names its problem with a <code className="font-mono text-roast">type</code>{" "}
          that is a page here, saying what happened and what to do: send the same request again
          under the same Idempotency-Key, make a new key for what is a new request, or fix the
          request.
        </p>
        {groups.map((group) => (
          <section key={group.action} className="mt-8" data-testid={`problems-${group.action}`}>
            <h2 className="flex items-center gap-3">
              <ProblemActionBadge action={group.action} label={group.label} />
              <span className="text-sm text-mocha">{group.problems.length} problems</span>
            </h2>
            <ul className="mt-3 divide-y divide-sand overflow-hidden rounded-2xl border border-sand bg-white">
              {group.problems.map((problem) => (
                <li key={problem.slug}>
                  <Link
                    href={problem.type}
                    className="flex items-baseline gap-3 px-4 py-3 hover:bg-oat focus:bg-oat"
                  >
                    <span className="w-10 shrink-0 font-mono text-sm font-semibold text-mocha">
                      {problem.status}
                    </span>
                    <span className="min-w-0">
                      <span className="block font-semibold text-espresso">{problem.title}</span>
                      <span className="block break-all font-mono text-xs text-mocha">
                        {problem.slug}
                      </span>
                    </span>
                  </Link>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </main>
      <SiteFooter />
    </>
  );
}
