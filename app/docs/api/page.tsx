import type { Metadata } from "next";
import { connection } from "next/server";
import { ApiContents } from "@/components/docs/ApiContents";
import { CheckoutRules } from "@/components/docs/CheckoutRules";
import { DocsSection } from "@/components/docs/DocsSection";
import { OperationArticle } from "@/components/docs/OperationArticle";
import { Prose } from "@/components/docs/Prose";
import { SchemaArticle } from "@/components/docs/SchemaArticle";
import { SiteFooter } from "@/components/shop/SiteFooter";
import { SiteHeader } from "@/components/shop/SiteHeader";
import { publishedOpenApiDocument } from "@/lib/api/openapi";
import { apiReferenceView } from "@/lib/pages/api-reference";

export const metadata: Metadata = { title: "API reference · OncePay Coffee Supply" };

// Per request: the page carries its CSP nonce (proxy.ts).
export default async function ApiReferencePage() {
  await connection();
  const view = apiReferenceView(publishedOpenApiDocument());
  return (
    <>
      <SiteHeader current="api" skipTo={{ href: "#reference", label: "Skip to the reference" }} />
      <main
        id="reference"
        className="mx-auto w-full max-w-7xl px-4 pb-16 pt-6 sm:px-6 lg:grid lg:grid-cols-[15rem_1fr] lg:gap-10 lg:px-8"
      >
        <aside className="hidden lg:block" data-testid="contents-side">
          <div className="sticky top-6 max-h-[calc(100dvh-3rem)] overflow-y-auto pr-2">
            <ApiContents view={view} />
          </div>
        </aside>
        <div className="min-w-0">
          <p className="text-xs font-semibold uppercase tracking-[0.16em] text-clay">
            API reference
          </p>
          <h1 className="mt-1 font-display text-3xl font-semibold text-espresso sm:text-4xl">
            {view.title}
          </h1>
          <p className="mt-2 max-w-3xl text-lg leading-relaxed text-espresso">{view.summary}</p>
          <p className="mt-4">
            <a
              href="/api/openapi.json"
              className="inline-flex items-center rounded-full bg-roast px-4 py-2 text-sm font-semibold text-cream hover:bg-espresso"
              data-testid="openapi-link"
            >
              The OpenAPI 3.1 document
            </a>
          </p>
          <details
            className="mt-6 rounded-2xl border border-sand bg-white p-4 lg:hidden"
            data-testid="contents-compact"
          >
            <summary className="cursor-pointer font-semibold text-espresso">
              Contents: {view.groups.reduce((count, group) => count + group.operations.length, 0)}{" "}
              operations
            </summary>
            <div className="mt-3">
              <ApiContents view={view} titled={false} />
            </div>
          </details>

          <DocsSection
            id="checkout-rules"
            title="Checkout rules: retries and the Idempotency-Key"
            intro={
              <>
                How a client of <code className="font-mono text-espresso">POST /api/orders</code>{" "}
                pays exactly once, however often it has to ask.
              </>
            }
          >
            <CheckoutRules rules={view.rules} checkoutId={view.checkout.id} />
          </DocsSection>

          <DocsSection
            id="conventions"
            title="What every answer shares"
            intro={<Prose text={view.description} />}
          >
            <p className="max-w-3xl leading-relaxed text-mocha">
              Every path also answers OPTIONS (204 with Allow), and 405 with Allow to a method it
              does not serve; HEAD answers as GET does, without the body.
            </p>
          </DocsSection>

          {view.groups.map((group) => (
            <DocsSection
              key={group.tag}
              id={`group-${group.tag}`}
              title={group.tag}
              intro={group.description}
            >
              <div className="space-y-6">
                {group.operations.map((operation) => (
                  <OperationArticle
                    key={operation.id}
                    operation={operation}
                    answersOpen={operation.id === view.checkout.id}
                  />
                ))}
              </div>
            </DocsSection>
          ))}

          <DocsSection
            id="schemas"
            title="Schemas"
            intro="The bodies the API reads and writes, made from the same schemas its code parses requests with."
          >
            <div className="space-y-6">
              {view.schemas.map((schema) => (
                <SchemaArticle key={schema.name} schema={schema} />
              ))}
            </div>
          </DocsSection>
        </div>
      </main>
      <SiteFooter />
    </>
  );
}
