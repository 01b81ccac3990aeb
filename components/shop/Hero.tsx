import { KeyIcon, RepeatIcon, CheckIcon } from "@/components/ui/icons";

const STEPS = [
  {
    icon: KeyIcon,
    title: "One key per order",
    text: "Pressing Pay creates a single Idempotency-Key for this checkout.",
  },
  {
    icon: RepeatIcon,
    title: "Safe retries",
    text: "Network hiccup? The browser retries with the very same key.",
  },
  {
    icon: CheckIcon,
    title: "Charged once",
    text: "The server replays the first result instead of charging again.",
  },
];

export function Hero() {
  return (
    <section
      aria-labelledby="hero-heading"
      className="mx-auto max-w-7xl px-4 pb-8 pt-5 sm:px-6 sm:pb-10 sm:pt-8 lg:px-8"
    >
      <div className="relative overflow-hidden rounded-3xl bg-roast px-5 py-8 text-cream sm:px-10 sm:py-10 lg:py-12">
        <div
          aria-hidden="true"
          className="pointer-events-none absolute -right-24 -top-24 size-80 rounded-full bg-clay/30 blur-2xl"
        />
        <div
          aria-hidden="true"
          className="pointer-events-none absolute -bottom-28 right-40 size-64 rounded-full bg-honey/15 blur-2xl"
        />
        <div className="relative grid gap-6 sm:gap-10 lg:grid-cols-[minmax(0,1.1fr)_minmax(0,1fr)] lg:items-center">
          <div>
            <p className="text-xs font-semibold uppercase tracking-[0.18em] text-honey">
              Small-batch gear for slow mornings
            </p>
            <h1
              id="hero-heading"
              className="mt-3 font-display text-3xl font-semibold leading-tight sm:text-5xl"
            >
              Good coffee, charged exactly once.
            </h1>
            <p className="mt-4 max-w-xl text-base leading-relaxed text-cream/85">
              Double-click Pay, lose your connection, retry as often as you like: every order is
              charged exactly once.
            </p>
          </div>
          <ol
            id="how-it-works"
            aria-label="How checkout works"
            className="grid scroll-mt-6 gap-2 sm:grid-cols-3 sm:gap-3 lg:grid-cols-1"
          >
            {STEPS.map(({ icon: Icon, title, text }, index) => (
              <li
                key={title}
                className="flex items-center gap-3 rounded-2xl bg-white/[0.07] p-2.5 ring-1 sm:items-start sm:p-4 ring-white/10"
              >
                <span className="grid size-8 shrink-0 place-items-center rounded-full bg-honey text-roast sm:size-9">
                  <Icon width={18} height={18} />
                </span>
                <span>
                  <span className="block text-sm font-semibold">
                    <span className="sr-only">Step {index + 1}: </span>
                    {title}
                  </span>
                  <span className="mt-0.5 hidden text-sm leading-snug text-cream/80 sm:block">
                    {text}
                  </span>
                </span>
              </li>
            ))}
          </ol>
        </div>
      </div>
    </section>
  );
}
