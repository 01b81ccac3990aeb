import { explainStorm } from "@/lib/lab/explain";
import { protocolName } from "@/lib/client/lab-storm";
import { LAB_STRATEGY_INFO, type LabStrategy, type StrategyKind } from "@/lib/lab/strategies";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon, RepeatIcon, Spinner } from "@/components/ui/icons";
import type { LabRun } from "./useStrategyLab";

/** One strategy's card: what it does, its storm button, and what its latest storm did, counted by the server. */
export function StrategyRow({
  strategy,
  size,
  run,
  running,
  disabled,
  onRun,
}: {
  strategy: LabStrategy;
  size: number;
  run: LabRun | undefined;
  running: boolean;
  disabled: boolean;
  onRun: () => void;
}) {
  const info = LAB_STRATEGY_INFO[strategy];
  return (
    <li
      className="grid gap-5 rounded-2xl border border-sand bg-white p-5 shadow-[0_10px_30px_-22px_rgba(43,29,22,0.45)] lg:grid-cols-[minmax(0,17rem)_minmax(0,1fr)_minmax(0,20rem)] lg:items-start"
      data-testid={`lab-row-${strategy}`}
      data-storm-id={run?.report.id ?? ""}
      aria-busy={running}
    >
      <div>
        <div className="flex flex-wrap items-center gap-2">
          <h2 className="font-display text-xl font-semibold text-espresso">{info.name}</h2>
          <span
            className={`rounded-full px-2 py-0.5 text-[0.6875rem] font-semibold uppercase tracking-wide ${KIND_BADGE[info.kind].tone}`}
          >
            {KIND_BADGE[info.kind].label}
          </span>
        </div>
        <p className="mt-1.5 text-sm leading-relaxed text-mocha">{info.how}</p>
        <button
          type="button"
          onClick={onRun}
          disabled={disabled}
          className={`mt-4 inline-flex w-full items-center justify-center gap-2 rounded-xl px-4 py-2.5 text-sm font-semibold text-cream shadow-sm transition-colors active:translate-y-px disabled:cursor-not-allowed disabled:bg-latte disabled:text-espresso disabled:shadow-none sm:w-auto ${
            info.kind === "broken" ? "bg-berry hover:bg-espresso" : "bg-roast hover:bg-espresso"
          }`}
          data-testid={`lab-run-${strategy}`}
        >
          {running ? <Spinner width={16} height={16} /> : <RepeatIcon width={16} height={16} />}
          {running ? `Firing ${size} requests…` : `Fire ${size} requests`}
        </button>
      </div>

      {run ? (
        <StormNumbers run={run} />
      ) : (
        <p className="self-center text-sm text-mocha">
          {running ? "Storm on its way…" : "No storm yet."}
        </p>
      )}
      {run ? <Verdict run={run} /> : <div className="hidden lg:block" />}
    </li>
  );
}

const KIND_BADGE: Record<StrategyKind, { label: string; tone: string }> = {
  broken: { label: "Broken on purpose", tone: "bg-berry-soft text-berry" },
  copied: { label: "A common design", tone: "bg-honey/40 text-roast" },
  real: { label: "The real one", tone: "bg-sage-soft text-sage" },
};

function StormNumbers({ run }: { run: LabRun }) {
  const { report, observation } = run;
  const provider = report.provider;
  const charges = provider.available ? provider.charges : null;
  const tooMany = (n: number | null) => n !== null && n > 1;
  return (
    <div className="min-w-0">
      <p className="text-sm text-espresso">
        <span className="font-semibold tabular-nums" data-testid="lab-sent">
          {report.size}
        </span>{" "}
        requests sent
        {observation?.peakInFlight != null && (
          <>
            ,{" "}
            <span className="font-semibold tabular-nums" data-testid="lab-peak">
              {observation.peakInFlight}
            </span>{" "}
            on the wire at once
            {observation.protocol && (
              <span data-testid="lab-protocol"> over {protocolName(observation.protocol)}</span>
            )}
          </>
        )}
      </p>
      <ul
        className="mt-2 flex flex-wrap gap-1.5"
        aria-label="HTTP statuses the browser saw"
        data-testid="lab-statuses"
      >
        {observation ? (
          observation.statuses.map(({ label, count }) => (
            <li
              key={label}
              className={`rounded-full px-2.5 py-0.5 text-xs font-semibold tabular-nums ${statusTone(label)}`}
              data-status={label}
              data-count={count}
            >
              {label} × {count}
            </li>
          ))
        ) : (
          <li className="text-xs text-mocha">Statuses were seen by another page load.</li>
        )}
      </ul>
      {/* On a phone the money gets a row of its own: a storm of 200 takes $3,600.00. */}
      <dl className="mt-3 grid grid-cols-2 gap-2 sm:grid-cols-3">
        <Stat
          label="Orders written"
          value={String(report.orders)}
          alarm={tooMany(report.orders)}
          testId="lab-orders"
        />
        <Stat
          label="Charges at the provider"
          value={charges === null ? "?" : String(charges)}
          alarm={tooMany(charges)}
          testId="lab-charges"
        />
        <Stat
          label="Money taken"
          value={provider.available ? formatMoney(provider.amountCharged, report.currency) : "?"}
          alarm={tooMany(charges)}
          testId="lab-money"
          wide
        />
      </dl>
      {!provider.available && <p className="mt-2 text-xs text-berry">{provider.detail}</p>}
    </div>
  );
}

function Stat({
  label,
  value,
  alarm,
  testId,
  wide = false,
}: {
  label: string;
  value: string;
  alarm: boolean;
  testId: string;
  /** Both columns on a phone, one from the small breakpoint up. */
  wide?: boolean;
}) {
  return (
    <div
      className={`rounded-xl px-3 py-2 ${alarm ? "bg-berry-soft" : "bg-cream"} ${wide ? "col-span-2 sm:col-span-1" : ""}`}
    >
      <dt className="text-[0.6875rem] font-medium uppercase leading-tight tracking-wide text-mocha">
        {label}
      </dt>
      <dd
        className={`mt-0.5 text-xl font-semibold tabular-nums ${alarm ? "text-berry" : "text-espresso"}`}
        data-testid={testId}
      >
        {value}
      </dd>
    </div>
  );
}

function Verdict({ run }: { run: LabRun }) {
  const { report } = run;
  if (!report.provider.available)
    return (
      <p className="text-sm text-mocha">
        The charges could not be counted, so there is no verdict.
      </p>
    );
  const verdict = explainStorm({
    strategy: report.strategy,
    size: report.size,
    orders: report.orders,
    charges: report.provider.charges,
  });
  const broke = verdict.outcome === "broke";
  const Icon = broke ? AlertIcon : verdict.outcome === "held" ? CheckIcon : RepeatIcon;
  return (
    <p
      className={`flex gap-2 rounded-xl p-3 text-sm leading-relaxed ${broke ? "bg-berry-soft text-espresso" : verdict.outcome === "held" ? "bg-sage-soft text-espresso" : "bg-oat text-espresso"}`}
      data-testid="lab-verdict"
      data-outcome={verdict.outcome}
    >
      <Icon
        width={18}
        height={18}
        className={`mt-0.5 shrink-0 ${broke ? "text-berry" : verdict.outcome === "held" ? "text-sage" : "text-clay"}`}
      />
      <span>
        <strong className="font-semibold">
          {broke ? "Broke. " : verdict.outcome === "held" ? "Held. " : "Got lucky. "}
        </strong>
        {verdict.sentence}
      </span>
    </p>
  );
}

function statusTone(label: string): string {
  if (label.startsWith("2"))
    return label.includes("replayed") ? "bg-clay-soft text-clay" : "bg-sage-soft text-sage";
  if (label === "409") return "bg-honey/40 text-roast";
  return "bg-berry-soft text-berry";
}
