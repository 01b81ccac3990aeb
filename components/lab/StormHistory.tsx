import type { StormReport } from "@/lib/client/lab-storm";
import { newerFirst } from "@/lib/lab/latest-runs";
import { LAB_STRATEGY_INFO } from "@/lib/lab/strategies";
import { formatMoney } from "@/components/ui/money";

const CELL = "px-2 py-2.5 sm:px-4";
const WIDE_ONLY = "hidden sm:table-cell";
// The counts take only the width they need; the design's name gets the rest.
const COUNT = "w-px whitespace-nowrap text-right";

/**
 * The account's latest runs and those this page ran since, newest first: the
 * record behind the rows above. On a phone the time and the kind of run move
 * under the design's name, so orders, charges and money stay in view without
 * a sideways scroll.
 */
export function StormHistory({ reports }: { reports: StormReport[] }) {
  if (reports.length === 0) return null;
  const newestFirst = [...reports].sort(newerFirst);
  return (
    <section aria-labelledby="history-heading" className="mt-10">
      <h2 id="history-heading" className="font-display text-2xl font-semibold text-espresso">
        Every run
      </h2>
      <p className="mt-1 text-sm text-mocha">The latest 20, and those run on this page since.</p>
      {/* Clips only the header's corners: the table fits its width (e2e/lab.spec.ts measures it at 390 px). */}
      <div className="mt-3 overflow-hidden rounded-2xl border border-sand bg-white">
        <table className="w-full text-left text-sm" data-testid="storm-history">
          <thead className="bg-oat text-xs uppercase tracking-wide text-mocha">
            <tr>
              <th scope="col" className={`${CELL} ${WIDE_ONLY} font-medium`}>
                When
              </th>
              <th scope="col" className={`${CELL} font-medium`}>
                Strategy
              </th>
              <th scope="col" className={`${CELL} ${WIDE_ONLY} font-medium`}>
                Run
              </th>
              <th scope="col" className={`${CELL} ${COUNT} font-medium`}>
                Orders
              </th>
              <th scope="col" className={`${CELL} ${COUNT} font-medium`}>
                Charges
              </th>
              <th scope="col" className={`${CELL} ${COUNT} font-medium`}>
                Money<span className="hidden sm:inline"> taken</span>
              </th>
            </tr>
          </thead>
          <tbody className="divide-y divide-sand">
            {newestFirst.map((report) => {
              const provider = report.provider;
              const overcharged = provider.available && provider.charges > 1;
              const when = (
                <time dateTime={report.createdAt}>{report.createdAt.slice(11, 19)} UTC</time>
              );
              const run =
                report.kind === "storm" ? `storm of ${report.size}` : "crash after the charge";
              return (
                <tr key={report.id} data-storm-id={report.id} data-kind={report.kind}>
                  <td className={`${CELL} ${WIDE_ONLY} whitespace-nowrap tabular-nums text-mocha`}>
                    {when}
                  </td>
                  <td className={`${CELL} text-espresso`}>
                    {LAB_STRATEGY_INFO[report.strategy].name}
                    <span className="block text-xs tabular-nums text-mocha sm:hidden">
                      {run}, {when}
                    </span>
                  </td>
                  <td className={`${CELL} ${WIDE_ONLY} text-mocha`}>{run}</td>
                  <td
                    className={`${CELL} ${COUNT} tabular-nums ${report.orders > 1 ? "font-semibold text-berry" : ""}`}
                    data-testid="history-orders"
                  >
                    {report.orders}
                  </td>
                  <td
                    className={`${CELL} ${COUNT} tabular-nums ${overcharged ? "font-semibold text-berry" : ""}`}
                    data-testid="history-charges"
                  >
                    {provider.available ? provider.charges : "?"}
                  </td>
                  <td
                    className={`${CELL} ${COUNT} tabular-nums ${overcharged ? "font-semibold text-berry" : ""}`}
                    data-testid="history-money"
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
