import Image from "next/image";
import type { FormEvent } from "react";
import type { Product } from "@/lib/orders/catalog";
import { PAYMENT_METHODS, type PaymentMethod } from "@/lib/client/api-types";
import { formatMoney } from "@/components/ui/money";
import { QuantityStepper } from "@/components/ui/QuantityStepper";
import { BagIcon, ChevronDownIcon, LockIcon, Spinner } from "@/components/ui/icons";

export interface ResolvedLine {
  product: Product;
  quantity: number;
}

interface CartPanelProps {
  lines: readonly ResolvedLine[];
  total: number;
  paymentMethod: PaymentMethod;
  paying: boolean;
  /** The cart in two lines, leaving room for the scenario and the attempts of a run that retries. */
  compact: boolean;
  /** The button's own guard against a second submit while paying; off only in the double-click demo. */
  guardSubmit: boolean;
  /** The demo's broken strategy is armed: say so on the button itself. */
  withoutKey: boolean;
  /** Something else must finish first (a demo scenario being applied). */
  blocked: boolean;
  onPaymentMethodChange: (method: PaymentMethod) => void;
  onQuantityChange: (sku: string, quantity: number) => void;
  onRemove: (sku: string) => void;
  onPay: () => void;
}

export function CartPanel({
  lines,
  total,
  paymentMethod,
  paying,
  compact,
  guardSubmit,
  withoutKey,
  blocked,
  onPaymentMethodChange,
  onQuantityChange,
  onRemove,
  onPay,
}: CartPanelProps) {
  const itemCount = lines.reduce((sum, line) => sum + line.quantity, 0);
  const empty = lines.length === 0;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    onPay();
  }

  return (
    <div>
      <div className="flex items-baseline justify-between gap-3">
        <h2 id="cart-heading" className="font-display text-2xl font-semibold text-espresso">
          Your cart
        </h2>
        <p className="text-sm text-mocha" data-testid="cart-count">
          {itemCount} {itemCount === 1 ? "item" : "items"}
        </p>
      </div>

      {empty ? (
        <div className="mt-5 flex flex-col items-center rounded-xl border border-dashed border-sand bg-cream px-6 py-8 text-center">
          <span className="grid size-12 place-items-center rounded-full bg-oat text-mocha">
            <BagIcon width={22} height={22} />
          </span>
          <p className="mt-3 font-medium text-espresso">Your cart is empty</p>
          <p className="mt-1 text-sm text-mocha">Add something from the shop to get brewing.</p>
        </div>
      ) : compact ? (
        // While a payment runs the cart cannot change: two short lines for it
        // leave room for Pay, the scenario and the attempts on one screen.
        <p className="mt-1 text-sm text-mocha" data-testid="cart-summary">
          <span className="block truncate">
            {lines.map(({ product, quantity }) => `${product.name} × ${quantity}`).join(", ")}
          </span>
          <span className="block truncate">
            {PAYMENT_METHODS.find((method) => method.id === paymentMethod)?.label}
          </span>
        </p>
      ) : (
        <CartLines
          lines={lines}
          disabled={paying}
          onQuantityChange={onQuantityChange}
          onRemove={onRemove}
        />
      )}

      {/* One line for the money: every line saved here keeps a run's attempts on screen. */}
      <dl
        className={`flex items-baseline justify-between border-t border-sand font-semibold ${compact ? "mt-2 pt-2" : "mt-4 pt-3"}`}
      >
        <dt>
          Total <span className="text-xs font-normal text-mocha">with free shipping</span>
        </dt>
        <dd className="tabular-nums" data-testid="cart-total">
          {formatMoney(total)}
        </dd>
      </dl>

      <form
        className={compact ? "mt-3 space-y-3" : "mt-4 space-y-3"}
        onSubmit={submit}
        aria-label="Checkout"
      >
        <div className={compact ? "sr-only" : undefined}>
          <label htmlFor="payment-method" className="block text-sm font-medium text-espresso">
            Payment method
          </label>
          <div className="relative mt-1.5">
            <select
              id="payment-method"
              name="paymentMethod"
              value={paymentMethod}
              disabled={paying}
              onChange={(event) => onPaymentMethodChange(event.target.value as PaymentMethod)}
              className="block w-full appearance-none rounded-xl border border-sand bg-white py-2.5 pl-3.5 pr-10 text-sm text-espresso shadow-sm disabled:cursor-not-allowed disabled:bg-oat"
            >
              {PAYMENT_METHODS.map((method) => (
                <option key={method.id} value={method.id}>
                  {method.label}
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

        <button
          type="submit"
          disabled={empty || blocked || (paying && guardSubmit)}
          aria-describedby="pay-note"
          className={`flex w-full items-center justify-center gap-2 rounded-xl px-5 py-3.5 text-base font-semibold text-cream shadow-sm transition-colors active:translate-y-px disabled:cursor-not-allowed disabled:bg-latte disabled:text-espresso disabled:shadow-none ${
            withoutKey ? "bg-berry hover:bg-espresso" : "bg-roast hover:bg-espresso"
          }`}
          data-testid="pay-button"
        >
          {paying ? (
            <>
              <Spinner width={18} height={18} />
              Paying…
            </>
          ) : (
            <>
              <LockIcon width={18} height={18} />
              Pay {formatMoney(total)}
              {withoutKey && " without a key"}
            </>
          )}
        </button>
        {/* While paying, the running scenario and the attempts say what this note says. */}
        <p
          id="pay-note"
          className={
            paying
              ? "sr-only"
              : `text-xs leading-relaxed ${withoutKey ? "font-medium text-berry" : "text-mocha"}`
          }
        >
          {withoutKey
            ? "Broken strategy (demo): this payment goes to the lab endpoint with no Idempotency-Key, so a retry is a second charge."
            : guardSubmit
              ? "One Idempotency-Key per order: however often it is sent, you are charged once."
              : "Double-click demo: this button stays enabled while paying. Every click of this order sends the same Idempotency-Key."}
        </p>
      </form>
    </div>
  );
}

interface CartLinesProps {
  lines: readonly ResolvedLine[];
  /** A payment is running: the cart cannot change under it. */
  disabled: boolean;
  onQuantityChange: (sku: string, quantity: number) => void;
  onRemove: (sku: string) => void;
}

function CartLines({ lines, disabled, onQuantityChange, onRemove }: CartLinesProps) {
  return (
    <ul
      className="-mx-1 mt-3 divide-y divide-sand px-1 lg:max-h-40 lg:overflow-y-auto"
      aria-label="Items in your cart"
    >
      {lines.map(({ product, quantity }) => (
        <li
          key={product.sku}
          className="flex gap-3 py-3"
          data-testid="cart-line"
          data-sku={product.sku}
        >
          <Image
            src={product.image}
            alt=""
            width={64}
            height={48}
            unoptimized
            className="h-12 w-16 shrink-0 rounded-lg bg-oat object-cover"
          />
          <div className="min-w-0 flex-1">
            <div className="flex items-start justify-between gap-2">
              <p className="font-medium leading-snug text-espresso">{product.name}</p>
              <p className="font-semibold tabular-nums text-espresso" data-testid="line-total">
                {formatMoney(product.unitAmount * quantity, product.currency)}
              </p>
            </div>
            <p className="text-xs text-mocha">
              {formatMoney(product.unitAmount, product.currency)} each
            </p>
            <div className="mt-2 flex items-center justify-between gap-2">
              <QuantityStepper
                label={product.name}
                value={quantity}
                disabled={disabled}
                onChange={(value) => onQuantityChange(product.sku, value)}
              />
              <button
                type="button"
                onClick={() => onRemove(product.sku)}
                disabled={disabled}
                className="rounded px-1 text-sm text-mocha underline decoration-sand underline-offset-4 hover:text-clay hover:decoration-clay disabled:cursor-not-allowed disabled:no-underline"
              >
                Remove<span className="sr-only"> {product.name} from cart</span>
              </button>
            </div>
          </div>
        </li>
      ))}
    </ul>
  );
}
