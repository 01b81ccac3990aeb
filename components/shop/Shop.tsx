"use client";

import { useMemo, useRef, useState } from "react";
import type { Product } from "@/lib/orders/catalog";
import {
  newIdempotencyKey,
  submitCheckout,
  type AttemptInfo,
  type Cart,
  type Order,
  type PaymentMethod,
} from "@/lib/client/checkout";
import { formatMoney } from "@/components/ui/money";
import { MAX_QUANTITY, MIN_QUANTITY } from "@/components/ui/QuantityStepper";
import { BagIcon } from "@/components/ui/icons";
import { CartPanel, type ResolvedLine } from "./CartPanel";
import { CheckoutStatus, type CheckoutPhase } from "./CheckoutStatus";
import { OrderConfirmation } from "./OrderConfirmation";
import { ProductGrid } from "./ProductGrid";

const MAX_ATTEMPTS = 4;

interface CartLine {
  sku: string;
  quantity: number;
}

interface PaidOrder {
  order: Order;
  replayed: boolean;
  key: string;
  attempts: number;
}

/** The submit intent whose outcome is still unknown: paying the same thing again reuses its key. */
interface PendingIntent {
  key: string;
  payload: string;
  /** Requests sent with this key so far, across Pay clicks. */
  requests: number;
}

function clamp(quantity: number): number {
  return Math.min(MAX_QUANTITY, Math.max(MIN_QUANTITY, Math.round(quantity)));
}

export function Shop({ products }: { products: readonly Product[] }) {
  const [lines, setLines] = useState<CartLine[]>([]);
  const [paymentMethod, setPaymentMethod] = useState<PaymentMethod>("pm_card_visa");
  const [phase, setPhase] = useState<CheckoutPhase>({ kind: "idle" });
  const [paid, setPaid] = useState<PaidOrder | null>(null);
  const [attempts, setAttempts] = useState<AttemptInfo[]>([]);
  const [currentKey, setCurrentKey] = useState<string | null>(null);

  // Not rendered, so refs: a cart's id is minted on its first payment, and
  // a second click while a payment runs must not start a second intent.
  const cartIdRef = useRef<string | null>(null);
  const pendingRef = useRef<PendingIntent | null>(null);
  const inFlightRef = useRef(false);
  const productsHeadingRef = useRef<HTMLHeadingElement>(null);

  const bySku = useMemo(() => new Map(products.map((product) => [product.sku, product])), [products]);
  const resolved: ResolvedLine[] = lines.flatMap((line) => {
    const product = bySku.get(line.sku);
    return product ? [{ product, quantity: line.quantity }] : [];
  });
  const total = resolved.reduce((sum, line) => sum + line.product.unitAmount * line.quantity, 0);
  const itemCount = resolved.reduce((sum, line) => sum + line.quantity, 0);
  // A paid cart is history: the product cards stop showing it as "in cart".
  const quantities = new Map(paid ? [] : lines.map((line) => [line.sku, line.quantity]));
  const paying = phase.kind === "paying";

  function resetCart() {
    cartIdRef.current = null;
    pendingRef.current = null;
    setLines([]);
    setPaid(null);
    setPhase({ kind: "idle" });
    setAttempts([]);
    setCurrentKey(null);
  }

  function addToCart(sku: string) {
    if (inFlightRef.current) return;
    if (paid) {
      // Shopping again after a paid order starts a new cart.
      resetCart();
      setLines([{ sku, quantity: 1 }]);
      return;
    }
    setLines((current) =>
      current.some((line) => line.sku === sku)
        ? current.map((line) => (line.sku === sku ? { ...line, quantity: clamp(line.quantity + 1) } : line))
        : [...current, { sku, quantity: 1 }],
    );
  }

  function setQuantity(sku: string, quantity: number) {
    if (inFlightRef.current) return;
    setLines((current) => current.map((line) => (line.sku === sku ? { ...line, quantity: clamp(quantity) } : line)));
  }

  function remove(sku: string) {
    if (inFlightRef.current) return;
    setLines((current) => current.filter((line) => line.sku !== sku));
  }

  function startNewOrder() {
    resetCart();
    // The confirmation (which had focus) is gone: continue from the shop.
    requestAnimationFrame(() => productsHeadingRef.current?.focus());
  }

  async function pay() {
    if (inFlightRef.current || lines.length === 0 || paid) return;
    inFlightRef.current = true;

    cartIdRef.current ??= newIdempotencyKey();
    const cart: Cart = { cartId: cartIdRef.current, items: lines.map(({ sku, quantity }) => ({ sku, quantity })) };
    // One key per submit intent. Only an unresolved intent for exactly the same
    // payload (cart and card) is continued with its key; anything else is new.
    const payload = JSON.stringify([cart, paymentMethod]);
    const resumed = pendingRef.current?.payload === payload ? pendingRef.current : null;
    const key = resumed?.key ?? newIdempotencyKey();
    // Attempts are counted per key: a resumed intent continues its numbering.
    const earlier = resumed?.requests ?? 0;
    pendingRef.current = { key, payload, requests: earlier };

    setCurrentKey(key);
    if (!resumed) setAttempts([]);
    setPhase({ kind: "paying", attempt: 1, maxAttempts: MAX_ATTEMPTS, retrying: false });

    try {
      const result = await submitCheckout({
        cart,
        paymentMethod,
        key,
        maxAttempts: MAX_ATTEMPTS,
        onAttempt: (attempt) => {
          if (pendingRef.current?.key === key) pendingRef.current.requests = earlier + attempt.n;
          setAttempts((previous) => [...previous, { ...attempt, n: earlier + attempt.n }]);
          if (attempt.retryInMs !== null) {
            setPhase({ kind: "paying", attempt: attempt.n + 1, maxAttempts: MAX_ATTEMPTS, retrying: true });
          }
        },
      });

      switch (result.kind) {
        case "paid":
          pendingRef.current = null;
          setPaid({ order: result.order, replayed: result.replayed, key, attempts: earlier + result.attempts });
          setPhase({ kind: "paid" });
          break;
        case "declined":
          // Settled (the server stored the decline): the next Pay is a new intent with a new key.
          pendingRef.current = null;
          setPhase({ kind: "declined", detail: result.problem.detail });
          break;
        case "failed":
          // Outcome unknown: keep the intent so paying again resends the same key.
          setPhase({ kind: "failed", detail: result.message });
          break;
      }
    } catch (error) {
      setPhase({ kind: "failed", detail: error instanceof Error ? error.message : "Something went wrong." });
    } finally {
      inFlightRef.current = false;
    }
  }

  return (
    <div className="mx-auto grid max-w-7xl gap-8 px-4 pb-16 sm:px-6 lg:grid-cols-[minmax(0,1fr)_380px] lg:items-start lg:px-8">
      <section id="products" aria-labelledby="products-heading" className="scroll-mt-6">
        <div className="mb-6 flex flex-wrap items-end justify-between gap-3">
          <div>
            <p className="text-xs font-semibold uppercase tracking-[0.16em] text-clay">The shop</p>
            <h2
              id="products-heading"
              ref={productsHeadingRef}
              tabIndex={-1}
              className="mt-1 font-display text-3xl font-semibold text-espresso"
            >
              Brew gear &amp; beans
            </h2>
          </div>
          {itemCount > 0 && !paid && (
            <a
              href="#cart"
              className="inline-flex items-center gap-2 rounded-full border border-sand bg-white px-4 py-2 text-sm font-medium text-espresso shadow-sm hover:bg-oat lg:hidden"
            >
              <BagIcon width={16} height={16} />
              View cart · {itemCount} {itemCount === 1 ? "item" : "items"} · {formatMoney(total)}
            </a>
          )}
        </div>
        <ProductGrid products={products} quantities={quantities} disabled={paying} onAdd={addToCart} />
      </section>

      <aside
        id="cart"
        aria-label="Cart and checkout"
        className="scroll-mt-6 lg:sticky lg:top-6 lg:max-h-[calc(100dvh-3rem)] lg:overflow-y-auto lg:rounded-2xl"
      >
        <div className="space-y-4 rounded-2xl border border-sand bg-white p-5 shadow-[0_10px_30px_-18px_rgba(43,29,22,0.35)] sm:p-6">
          {paid ? (
            <OrderConfirmation
              order={paid.order}
              replayed={paid.replayed}
              idempotencyKey={paid.key}
              attempts={paid.attempts}
              onNewOrder={startNewOrder}
            />
          ) : (
            <CartPanel
              lines={resolved}
              total={total}
              paymentMethod={paymentMethod}
              paying={paying}
              onPaymentMethodChange={setPaymentMethod}
              onQuantityChange={setQuantity}
              onRemove={remove}
              onPay={pay}
            />
          )}
          <CheckoutStatus phase={phase} idempotencyKey={currentKey} attempts={attempts} />
        </div>
      </aside>
    </div>
  );
}
