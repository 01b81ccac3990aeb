import type { DemoScenario } from "@/lib/client/demo";
import { RepeatIcon } from "@/components/ui/icons";

/**
 * The armed scenario, beside Pay and the attempts while the payment runs:
 * cause and effect on one screen, however far the page is scrolled from
 * the demo panel. Any action the scenario asks for is here.
 */
export function RunningScenario({ scenario }: { scenario: DemoScenario }) {
  return (
    <section
      aria-label="Scenario running"
      data-testid="running-scenario"
      className={`rounded-xl border-2 border-dashed px-3.5 py-2.5 text-sm ${
        scenario.broken ? "border-berry/45 bg-berry-soft" : "border-clay/45 bg-cream"
      }`}
    >
      <p className="font-semibold text-espresso">
        <span className="mr-1.5 rounded-full bg-clay-soft px-2 py-0.5 text-xs font-semibold uppercase tracking-[0.12em] text-clay">
          Demo
        </span>
        {scenario.label}
      </p>
      <p className="mt-1 text-xs leading-snug text-mocha">
        <span className="font-medium text-espresso">Look for:</span> {scenario.expect}
      </p>
      {scenario.id === "reload" && (
        <button
          type="button"
          onClick={() => window.location.reload()}
          className="mt-2.5 inline-flex items-center gap-2 rounded-full bg-roast px-4 py-2 text-sm font-semibold text-cream hover:bg-espresso"
        >
          <RepeatIcon width={16} height={16} /> Reload the page now
        </button>
      )}
    </section>
  );
}
