import { formatMoney } from "@/components/ui/money";
import { ChevronDownIcon, BagIcon, LockIcon, Spinner } from "@/components/ui/icons";

interface MobileCartBarProps {
  itemCount: number;
  total: number;
  paying: boolean;
  /** The payment went through: the bar points at the confirmation instead of offering Pay. */
  paid: boolean;
  /** The same rule as the cart's own Pay button. */
  payDisabled: boolean;
  withoutKey: boolean;
  onPay: () => void;
}

/**
 * On a phone the cart sits below every product: this bar keeps the count,
 * the total and Pay on screen once the cart holds something. Once paid it
 * stays, pointing at the order, so nothing that changes state appears
 * under the thumb that pressed Pay.
 */
export function MobileCartBar({
  itemCount,
  total,
  paying,
  paid,
  payDisabled,
  withoutKey,
  onPay,
}: MobileCartBarProps) {
  return (
    <div
      data-testid="cart-bar"
      className="fixed inset-x-0 bottom-0 z-20 border-t border-sand bg-white/95 px-4 pb-[max(0.75rem,env(safe-area-inset-bottom))] pt-3 shadow-[0_-8px_24px_-16px_rgba(43,29,22,0.35)] backdrop-blur lg:hidden"
    >
      <div className="mx-auto flex max-w-xl items-center gap-3">
        <a href="#cart" className="flex min-w-0 flex-1 items-center gap-2 text-sm text-espresso">
          <BagIcon width={18} height={18} className="shrink-0 text-mocha" />
          <span className="min-w-0">
            <span className="block font-semibold tabular-nums" data-testid="cart-bar-total">
              {formatMoney(total)}
            </span>
            <span className="block text-xs text-mocha" data-testid="cart-bar-count">
              {itemCount} {itemCount === 1 ? "item" : "items"} · view cart
            </span>
          </span>
        </a>
        {paid ? (
          // Neutral: whether this purchase went right is the order box's to say.
          <a
            href="#cart"
            className="inline-flex items-center gap-2 rounded-xl bg-oat px-4 py-3 text-sm font-semibold text-espresso"
          >
            <ChevronDownIcon width={18} height={18} /> See your order
          </a>
        ) : (
          <button
            type="button"
            onClick={onPay}
            disabled={payDisabled}
            data-testid="cart-bar-pay"
            className={`inline-flex shrink-0 items-center gap-2 rounded-xl px-5 py-3 text-sm font-semibold text-cream shadow-sm disabled:cursor-not-allowed disabled:bg-latte disabled:text-espresso disabled:shadow-none ${
              withoutKey ? "bg-berry hover:bg-espresso" : "bg-roast hover:bg-espresso"
            }`}
          >
            {paying ? (
              <>
                <Spinner width={16} height={16} /> Paying…
              </>
            ) : (
              <>
                <LockIcon width={16} height={16} /> Pay {formatMoney(total)}
              </>
            )}
          </button>
        )}
      </div>
    </div>
  );
}
