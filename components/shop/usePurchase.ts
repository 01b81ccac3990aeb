"use client";

import { useEffect, useState } from "react";
import { fetchPurchase, type PurchaseResult } from "@/lib/client/purchase";

/** The records' account of one paid cart, asked once when it is shown; null while the answer is on its way. */
export function usePurchase(cartId: string): PurchaseResult | null {
  const [result, setResult] = useState<{ cartId: string; result: PurchaseResult } | null>(null);
  useEffect(() => {
    let current = true;
    void fetchPurchase(cartId).then((answer) => {
      if (current) setResult({ cartId, result: answer });
    });
    return () => {
      current = false;
    };
  }, [cartId]);
  return result?.cartId === cartId ? result.result : null;
}
