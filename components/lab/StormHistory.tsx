import type { StormReport } from "@/lib/client/lab-storm";
import { LAB_STRATEGY_INFO } from "@/lib/lab/strategies";
import { formatMoney } from "@/components/ui/money";

/** Every storm and crash scenario this browser's account ran, newest first: the record behind the rows above. */
export function StormHistory({ reports }: { reports: StormReport[] }) {
  if (reports.length === 0) return null;
  const newestFirst = [...reports].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (
    <section aria-labelledby="history-heading" className="mt-10">
      <h2 id="history-heading" className="font-display text-2xl font-semibold text-espresso">
        Every run
      </h2>
      {/* Scrolls sideways on a phone: focusable, so the arrow keys can scroll it in every browser. */}
      <div
        role="region"
        aria-label="Every run, scrolls sideways"
        tabIndex={0}
        className="mt-3 overflow-x-auto rounded-2xl border border-sand bg-white"
      >
        <table className="w-full min-w-[36rem] text-left text-sm" data-testid="storm-history">
          <thead className="bg-oat text-xs uppercase tracking-wide text-mocha">
            <tr>
              <th scope="col" className="px-4 py-2.5 font-medium">
                When
              </th>
              <th scope="col" className="px-4 py-2.5 font-medium">
                Strategy
              </th>
              <th scope="col" className="px-4 py-2.5 font-medium">
                Run
              </th>
              <th scope="col" className="px-4 py-2.5 text-right font-medium">
                Orders
              </th>
              <th scope="col" className="px-4 py-2.5 text-right font-medium">
                Charges
              </th>
              <th scope="col" className="px-4 py-2.5 text-right font-medium">
                Money taken
              </th>
            </tr>
          </thead>
          <tbody className="divide-y divide-sand">
            {newestFirst.map((report) => {
              const provider = report.provider;
              const overcharged = provider.available && provider.charges > 1;
              return (
                <tr key={report.id} data-storm-id={report.id} data-kind={report.kind}>
                  <td className="whitespace-nowrap px-4 py-2.5 tabular-nums text-mocha">
                    <time dateTime={report.createdAt}>{report.createdAt.slice(11, 19)} UTC</time>
                  </td>
                  <td className="px-4 py-2.5 text-espresso">
                    {LAB_STRATEGY_INFO[report.strategy].name}
                  </td>
                  <td className="px-4 py-2.5 text-mocha">
                    {report.kind === "storm" ? `storm of ${report.size}` : "crash after the charge"}
                  </td>
                  <td
                    className={`px-4 py-2.5 text-right tabular-nums ${report.orders > 1 ? "font-semibold text-berry" : ""}`}
                  >
                    {report.orders}
                  </td>
                  <td
                    className={`px-4 py-2.5 text-right tabular-nums ${overcharged ? "font-semibold text-berry" : ""}`}
                  >
                    {provider.available ? provider.charges : "?"}
                  </td>
                  <td
                    className={`px-4 py-2.5 text-right tabular-nums ${overcharged ? "font-semibold text-berry" : ""}`}
                  >
                    {provider.available
                      ? formatMoney(provider.amountCharged, report.currency)
                      : "?"}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
