import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { connection } from "next/server";
import { ProblemActionBadge } from "@/components/docs/ProblemAction";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader } from "@/components/shop/SiteHeader";
import { problemPageView } from "@/lib/pages/problems";

export async function generateMetadata({
  params,
}: PageProps<"/problems/[slug]">): Promise<Metadata> {
  const view = problemPageView((await params).slug);
  return { title: `${view?.title ?? "Unknown problem"} · OncePay Coffee Supply` };
}

// Per request: the page carries its CSP nonce (proxy.ts).
export default async function ProblemPage({ params }: PageProps<"/problems/[slug]">) {
  await connection();
  const view = problemPageView((await params).slug);
  if (!view) notFound();
  return (
    <>
      <SiteHeader current={null} skipTo={{ href: "#problem", label: "Skip to the problem" }} />
      <main id="problem" className="mx-auto w-full max-w-3xl px-4 pb-16 pt-6 sm:px-6 lg:px-8">
        <Link
          href="/problems"
          className="text-sm font-semibold text-clay underline underline-offset-2"
        >
          ← Every problem
        </Link>
        <p className="mt-4 text-xs font-semibold uppercase tracking-[0.16em] text-clay">
          Problem · {view.status}
        </p>
        <h1
          className="mt-1 font-display text-3xl font-semibold text-espresso sm:text-4xl"
          data-testid="problem-title"
        >
          {view.title}
        </h1>
        <p className="mt-2 break-all font-mono text-sm text-mocha">type: {view.type}</p>

        <section className="mt-8 rounded-2xl border border-sand bg-white p-5 shadow-sm sm:p-6">
          <h2 className="font-display text-xl font-semibold text-espresso">What happened</h2>
          <p className="mt-2 leading-relaxed text-espresso" data-testid="problem-happened">
            {view.happened}
          </p>
        </section>

        <section className="mt-4 rounded-2xl border border-sand bg-white p-5 shadow-sm sm:p-6">
          <div className="flex flex-wrap items-center gap-3">
            <h2 className="font-display text-xl font-semibold text-espresso">What to do</h2>
            <ProblemActionBadge action={view.action} label={view.actionLabel} />
          </div>
          <p className="mt-2 leading-relaxed text-espresso" data-testid="problem-todo">
            {view.todo}
          </p>
        </section>

        <p className="mt-8 text-sm leading-relaxed text-mocha">
          Every error the API answers is problem details (application/problem+json): its{" "}
          <code className="font-mono text-roast">type</code> is this page&apos;s path, and its
          answer links here with <code className="font-mono text-roast">Link</code>{" "}
          (rel=&quot;describedby&quot;). The{" "}
          <Link href="/docs/api" className="font-semibold text-clay underline underline-offset-2">
            API reference
          </Link>{" "}
          lists which answers carry it.
        </p>
      </main>
      <SiteFooter />
    </>
  );
}
