"use client";

import Link from "next/link";
import { DEMO_SCENARIOS, SLOW_DELAY_OPTIONS_MS, type DemoScenario } from "@/lib/client/demo";
import { AlertIcon, ChevronDownIcon, RepeatIcon } from "@/components/ui/icons";
import type { DemoState } from "./useDemoScenario";

interface DemoPanelProps {
  demo: DemoState;
  /** A payment is running: scenarios cannot change under it. */
  paying: boolean;
}

/**
 * The checkout's demo lab: scenarios that try to make the shop charge twice.
 * Clearly set apart from the shop (dashed frame, "Demo" label), and every
 * scenario says what it does and what the attempts timeline should show.
 */
export function DemoPanel({ demo, paying }: DemoPanelProps) {
  const { scenario, availability, applying, notice } = demo;
  const serverUnavailable = availability.kind === "unavailable";
  const armed = scenario.id !== "none";

  return (
    <section
      aria-labelledby="demo-heading"
      data-testid="demo-panel"
      className="mb-8 rounded-2xl border-2 border-dashed border-clay/45 bg-white p-5 sm:p-6"
    >
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="max-w-2xl">
          <p className="inline-flex items-center gap-1.5 rounded-full bg-clay-soft px-2.5 py-0.5 text-xs font-semibold uppercase tracking-[0.14em] text-clay">
            <RepeatIcon width={14} height={14} /> Demo lab
          </p>
          <h2 id="demo-heading" className="mt-2 font-display text-2xl font-semibold text-espresso">
            Try to get charged twice
          </h2>
          <p className="mt-1 text-sm leading-relaxed text-mocha">
            Pick a scenario, fill the cart and press Pay, then watch the attempts under the cart. A
            scenario lasts for one payment and affects only this browser&apos;s account. To race
            whole designs against each other, many requests at once, open the{" "}
            <Link
              href="/lab"
              className="font-semibold text-clay underline underline-offset-2 hover:text-espresso"
            >
              strategy lab
            </Link>
            .
          </p>
        </div>
      </div>

      {serverUnavailable && (
        <p
          className="mt-4 flex gap-2 rounded-xl bg-berry-soft px-3.5 py-2.5 text-sm text-espresso"
          data-testid="demo-unavailable"
        >
          <AlertIcon width={18} height={18} className="mt-px shrink-0 text-berry" />
          <span>
            <strong className="font-semibold">Server-side scenarios are unavailable.</strong>{" "}
            {availability.reason} Start the app with{" "}
            <code className="font-mono text-xs">DEMO_FAULTS=on</code> to use them; Double-click and
            3-D Secure work without it.
          </span>
        </p>
      )}

      <fieldset className="mt-5" disabled={paying || applying}>
        <legend className="text-sm font-medium text-espresso">Scenario</legend>
        <div className="mt-2 grid gap-2.5 sm:grid-cols-2 xl:grid-cols-3">
          {DEMO_SCENARIOS.map((option) => (
            <ScenarioOption
              key={option.id}
              option={option}
              checked={option.id === scenario.id}
              unavailable={option.needsServerFaults && serverUnavailable}
              onSelect={() => demo.select(option.id)}
            />
          ))}
        </div>
      </fieldset>

      {scenario.id === "slow-network" && (
        <div className="mt-4 max-w-sm">
          <label htmlFor="slow-delay" className="block text-sm font-medium text-espresso">
            Server holds each payment for
          </label>
          <div className="relative mt-1.5">
            <select
              id="slow-delay"
              value={demo.slowDelayMs}
              disabled={paying || applying}
              onChange={(event) => demo.changeSlowDelay(Number(event.target.value))}
              className="block w-full appearance-none rounded-xl border border-sand bg-white py-2.5 pl-3.5 pr-10 text-sm text-espresso shadow-sm disabled:cursor-not-allowed disabled:bg-oat"
            >
              {SLOW_DELAY_OPTIONS_MS.map((ms) => (
                <option key={ms} value={ms}>
                  {ms / 1000} seconds
                  {ms > 6000 ? ", outlasts the 6 s timeout" : ", inside the 6 s timeout"}
                </option>
              ))}
            </select>
            <ChevronDownIcon
              width={18}
              height={18}
              className="pointer-events-none absolute right-3 top-1/2 -translate-y-1/2 text-mocha"
            />
          </div>
        </div>
      )}

      <div
        className={`mt-4 rounded-xl px-3.5 py-3 text-sm ${scenario.broken ? "bg-berry-soft" : "bg-oat"}`}
      >
        <p
          role="status"
          aria-live="polite"
          data-testid="demo-status"
          className="font-medium text-espresso"
        >
          {applying
            ? "Applying the scenario…"
            : armed
              ? `Armed: ${scenario.label}. ${paying ? "Running now: follow it at the checkout." : "Press Pay to run it."}`
              : (notice ?? "No scenario armed: Pay runs the normal checkout.")}
        </p>
        {armed && (
          <p className="mt-1 text-mocha">
            <span className="font-medium text-espresso">What to look for:</span> {scenario.expect}
          </p>
        )}
        {armed && notice && <p className="mt-1 text-berry">{notice}</p>}
      </div>
    </section>
  );
}

interface ScenarioOptionProps {
  option: DemoScenario;
  checked: boolean;
  unavailable: boolean;
  onSelect: () => void;
}

function ScenarioOption({ option, checked, unavailable, onSelect }: ScenarioOptionProps) {
  const id = `scenario-${option.id}`;
  return (
    <label
      htmlFor={id}
      className={`flex cursor-pointer gap-3 rounded-xl border p-3 transition-colors focus-within:outline focus-within:outline-2 focus-within:outline-offset-2 focus-within:outline-clay has-[:disabled]:cursor-not-allowed has-[:disabled]:opacity-60 ${
        checked
          ? option.broken
            ? "border-berry bg-berry-soft"
            : "border-roast bg-oat"
          : "border-sand bg-white hover:bg-cream"
      }`}
    >
      <input
        id={id}
        type="radio"
        name="demo-scenario"
        value={option.id}
        checked={checked}
        disabled={unavailable}
        onChange={onSelect}
        aria-labelledby={`${id}-label`}
        aria-describedby={`${id}-summary`}
        className="mt-0.5 size-4 shrink-0 accent-roast focus-visible:outline-none"
      />
      <span className="min-w-0">
        <span
          id={`${id}-label`}
          className={`block text-sm font-semibold ${option.broken ? "text-berry" : "text-espresso"}`}
        >
          {option.label}
        </span>
        <span id={`${id}-summary`} className="mt-0.5 block text-xs leading-snug text-mocha">
          {unavailable ? "Unavailable: needs DEMO_FAULTS=on at the server." : option.summary}
        </span>
      </span>
    </label>
  );
}
