"use client";

import { useLayoutEffect, useMemo, useRef, useState, type MouseEvent } from "react";
import type { Product } from "@/lib/orders/catalog";
import type { CartLine, PaymentMethod } from "@/lib/client/api-types";
import { newCartId } from "@/lib/client/cart-id";
import { createPressGuard } from "@/lib/client/press-guard";
import type { RestoredCart } from "@/lib/client/intent-runner";
import { DemoPanel } from "@/components/demo/DemoPanel";
import { RunningScenario } from "@/components/demo/RunningScenario";
import { useDemoScenario } from "@/components/demo/useDemoScenario";
import { MAX_QUANTITY, MIN_QUANTITY } from "@/components/ui/QuantityStepper";
import { AttemptsTimeline } from "./AttemptsTimeline";
import { CartPanel, type ResolvedLine } from "./CartPanel";
import { CheckoutStatus } from "./CheckoutStatus";
import { MobileCartBar } from "./MobileCartBar";
import { OrderConfirmation } from "./OrderConfirmation";
import { ProductGrid } from "./ProductGrid";
import { useCheckout } from "./useCheckout";

function clamp(quantity: number): number {
  return Math.min(MAX_QUANTITY, Math.max(MIN_QUANTITY, Math.round(quantity)));
}

/** The storefront: the cart lives here; paying is useCheckout's job, the demo scenarios useDemoScenario's. */
export function Shop({ products }: { products: readonly Product[] }) {
  const [lines, setLines] = useState<CartLine[]>([]);
  const [paymentMethod, setPaymentMethod] = useState<PaymentMethod>("pm_card_visa");
  // Not rendered, so a ref: a cart's id is minted on its first payment.
  const cartIdRef = useRef<string | null>(null);
  const productsHeadingRef = useRef<HTMLHeadingElement>(null);
  const [pressGuard] = useState(() => createPressGuard());

  const demo = useDemoScenario({
    // A scenario that needs a card (3-D Secure) picks it where the shopper sees it.
    onArmed: (scenario) => {
      if (scenario.paymentMethod) setPaymentMethod(scenario.paymentMethod);
    },
  });
  const checkout = useCheckout({
    onRestore: (intent: RestoredCart) => {
      cartIdRef.current = intent.cartId;
      setLines(intent.items);
      setPaymentMethod(intent.paymentMethod);
    },
    onSettled: () => void demo.finishRun(),
  });
  const { phase, paid } = checkout;

  const bySku = useMemo(
    () => new Map(products.map((product) => [product.sku, product])),
    [products],
  );
  const resolved: ResolvedLine[] = lines.flatMap((line) => {
    const product = bySku.get(line.sku);
    return product ? [{ product, quantity: line.quantity }] : [];
  });
  const total = resolved.reduce((sum, line) => sum + line.product.unitAmount * line.quantity, 0);
  const itemCount = resolved.reduce((sum, line) => sum + line.quantity, 0);
  // A paid cart is history: the product cards stop showing it as "in cart".
  const quantities = new Map(paid ? [] : lines.map((line) => [line.sku, line.quantity]));
  // Busy from the first attempt until the payment settles, the bank's round trip included.
  const paying =
    phase.kind === "paying" ||
    phase.kind === "waiting" ||
    phase.kind === "authenticating" ||
    phase.kind === "confirming";
  const settled = phase.kind === "paid" || phase.kind === "declined" || phase.kind === "failed";
  const payDisabled =
    lines.length === 0 || demo.applying || (paying && demo.scenario.strategy.guardSubmit);

  // A settled payment swaps the controls around Pay (the confirmation's
  // "Start a new order", a re-enabled Pay). Marked before the browser can
  // deliver the next click, so the second click of a double-click on Pay is
  // not taken for a press of whatever took its place.
  useLayoutEffect(() => {
    if (settled) pressGuard.changed();
  }, [settled, pressGuard]);

  // The cart folds to two lines to make room for the run's attempts once
  // there is more than one. Not before: the second click of a double-click
  // must find Pay where the first did, and in the double-click demo the
  // second attempt is that very click.
  const foldCart = paying && checkout.log.length > 1;

  /**
   * No control of the shop (the confirmation's links and "Start a new
   * order", a Pay re-enabled by a decline, the phone's cart bar) takes the
   * second click of a double-click: a click at the spot of the one before,
   * within a double-click's interval of the payment settling. Keyboard
   * activation (a click with detail 0) is never part of a double-click.
   */
  function ignoreSecondClick(event: MouseEvent) {
    if (event.detail === 0) return;
    if (!pressGuard.ignore({ x: event.clientX, y: event.clientY })) return;
    event.preventDefault();
    event.stopPropagation();
  }

  function resetCart() {
    cartIdRef.current = null;
    setLines([]);
    checkout.reset();
  }

  function addToCart(sku: string) {
    if (paying) return;
    if (paid) {
      // Shopping again after a paid order starts a new cart.
      resetCart();
      setLines([{ sku, quantity: 1 }]);
      return;
    }
    setLines((current) =>
      current.some((line) => line.sku === sku)
        ? current.map((line) =>
            line.sku === sku ? { ...line, quantity: clamp(line.quantity + 1) } : line,
          )
        : [...current, { sku, quantity: 1 }],
    );
  }

  function setQuantity(sku: string, quantity: number) {
    if (paying) return;
    setLines((current) =>
      current.map((line) => (line.sku === sku ? { ...line, quantity: clamp(quantity) } : line)),
    );
  }

  function remove(sku: string) {
    if (paying) return;
    setLines((current) => current.filter((line) => line.sku !== sku));
  }

  function startNewOrder() {
    resetCart();
    // The confirmation (which had focus) is gone: continue from the shop.
    requestAnimationFrame(() => productsHeadingRef.current?.focus());
  }

  function pay() {
    if (lines.length === 0 || paid || demo.applying) return;
    cartIdRef.current ??= newCartId();
    checkout.pay({
      cart: {
        cartId: cartIdRef.current,
        items: lines.map(({ sku, quantity }) => ({ sku, quantity })),
      },
      paymentMethod,
      strategy: demo.scenario.strategy,
    });
  }

  return (
    <div
      onClickCapture={ignoreSecondClick}
      className="mx-auto grid max-w-7xl gap-8 px-4 pb-16 sm:px-6 lg:grid-cols-[minmax(0,1fr)_380px] lg:items-start lg:px-8"
    >
      <div className="min-w-0">
        <DemoPanel demo={demo} paying={paying} />
        <section id="products" aria-labelledby="products-heading" className="scroll-mt-6">
          <div className="mb-6 flex flex-wrap items-end justify-between gap-3">
            <div>
              <p className="text-xs font-semibold uppercase tracking-[0.16em] text-clay">
                The shop
              </p>
              <h2
                id="products-heading"
                ref={productsHeadingRef}
                tabIndex={-1}
                className="mt-1 font-display text-3xl font-semibold text-espresso"
              >
                Brew gear &amp; beans
              </h2>
            </div>
          </div>
          <ProductGrid
            products={products}
            quantities={quantities}
            disabled={paying}
            onAdd={addToCart}
          />
        </section>
      </div>

      <aside
        id="cart"
        aria-label="Cart and checkout"
        data-scrolls-itself
        className="min-w-0 scroll-mt-6 lg:sticky lg:top-6 lg:max-h-[calc(100dvh-3rem)] lg:overflow-y-auto lg:rounded-2xl"
      >
        <div className="space-y-3 rounded-2xl border border-sand bg-white p-5 shadow-[0_10px_30px_-18px_rgba(43,29,22,0.35)] sm:p-6">
          {paid ? (
            <OrderConfirmation
              order={paid.order}
              replayed={paid.replayed}
              idempotencyKey={paid.key}
              attempts={paid.attempts}
              redeliverWebhooks={demo.lastRun?.redeliversWebhooks === true}
              onNewOrder={startNewOrder}
            />
          ) : (
            <CartPanel
              lines={resolved}
              total={total}
              paymentMethod={paymentMethod}
              paying={paying}
              compact={foldCart}
              guardSubmit={demo.scenario.strategy.guardSubmit}
              withoutKey={!demo.scenario.strategy.sendIdempotencyKey}
              blocked={demo.applying}
              onPaymentMethodChange={setPaymentMethod}
              onQuantityChange={setQuantity}
              onRemove={remove}
              onPay={pay}
            />
          )}
          {paying && demo.scenario.id !== "none" && <RunningScenario scenario={demo.scenario} />}
          <CheckoutStatus phase={phase} keyless={checkout.keyless} />
          <AttemptsTimeline
            log={checkout.log}
            idempotencyKey={checkout.key}
            keyless={checkout.keyless}
            running={paying}
            followNewest={!paying || foldCart}
          />
        </div>
      </aside>

      {itemCount > 0 && (
        <MobileCartBar
          itemCount={itemCount}
          total={total}
          paying={paying}
          paid={paid !== null}
          payDisabled={payDisabled}
          withoutKey={!demo.scenario.strategy.sendIdempotencyKey}
          onPay={pay}
        />
      )}
    </div>
  );
}
