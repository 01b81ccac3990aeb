import type { ReactNode } from "react";
import { KeyIcon } from "@/components/ui/icons";

/** One recovery point of a key's operation, and when the key reached it. */
export interface KeyStep {
  /** Its name in the key's `reached` (data-point, for the tests). */
  point: string;
  label: string;
  what: string;
  at: string | null;
}

/** One box of the key page, titled. */
export function KeySection({
  title,
  icon = false,
  children,
}: {
  title: string;
  icon?: boolean;
  children: ReactNode;
}) {
  return (
    <section className="rounded-2xl border border-sand bg-white p-4 sm:p-5">
      <h2 className="mb-3 flex items-center gap-2 font-display text-lg font-semibold text-espresso">
        {icon && <KeyIcon width={18} height={18} className="text-clay" />}
        {title}
      </h2>
      {children}
    </section>
  );
}

/** The provider key a key's request was sent to the provider under. */
export function ProviderKeyLine({ providerKey }: { providerKey: string }) {
  return (
    <p className="text-sm text-mocha">
      Provider key{" "}
      <code className="break-all font-mono text-xs text-espresso" data-testid="key-provider-key">
        {providerKey}
      </code>
    </p>
  );
}
