import { LogoMark } from "@/components/ui/Logo";

/** The last thing on every page: mt-auto holds it to the bottom of a short one (the body is a flex column). */
export function SiteFooter() {
  return (
    <footer className="mt-auto border-t border-sand bg-oat">
      <div className="mx-auto flex max-w-7xl flex-col gap-4 px-4 py-8 text-sm text-mocha sm:flex-row sm:items-center sm:justify-between sm:px-6 lg:px-8">
        <div className="flex items-center gap-3">
          <LogoMark size={28} />
          <p data-testid="demo-notice">
            <strong className="font-semibold text-espresso">
              OncePay Coffee Supply is a demo.
            </strong>{" "}
            Test cards only, no real charges.
          </p>
        </div>
        <p>A working reference for the Idempotency-Key pattern.</p>
      </div>
    </footer>
  );
}
