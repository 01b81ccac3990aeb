import { MinusIcon, PlusIcon } from "./icons";

export const MIN_QUANTITY = 1;
export const MAX_QUANTITY = 99;

interface QuantityStepperProps {
  /** What is being counted, for the buttons' accessible names ("Increase quantity of …"). */
  label: string;
  value: number;
  onChange: (value: number) => void;
  disabled?: boolean;
}

const stepButton =
  "grid size-8 place-items-center rounded-full text-roast transition-colors hover:bg-oat disabled:cursor-not-allowed disabled:text-latte disabled:hover:bg-transparent";

export function QuantityStepper({
  label,
  value,
  onChange,
  disabled = false,
}: QuantityStepperProps) {
  return (
    <div
      className="inline-flex items-center gap-0.5 rounded-full border border-sand bg-white p-0.5"
      role="group"
      aria-label={`Quantity of ${label}`}
    >
      <button
        type="button"
        className={stepButton}
        aria-label={`Decrease quantity of ${label}`}
        disabled={disabled || value <= MIN_QUANTITY}
        onClick={() => onChange(value - 1)}
      >
        <MinusIcon width={16} height={16} />
      </button>
      <span
        className="min-w-7 text-center text-sm font-semibold tabular-nums"
        data-testid="line-quantity"
      >
        <span className="sr-only">Quantity </span>
        {value}
      </span>
      <button
        type="button"
        className={stepButton}
        aria-label={`Increase quantity of ${label}`}
        disabled={disabled || value >= MAX_QUANTITY}
        onClick={() => onChange(value + 1)}
      >
        <PlusIcon width={16} height={16} />
      </button>
    </div>
  );
}
