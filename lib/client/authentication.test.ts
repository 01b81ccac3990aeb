import { describe, expect, it } from "vitest";
import { MemoryStorage, jsonAnswer, sampleOrder } from "@/lib/testing/browser";
import { awaitSettledOrder, createAuthenticationStore, nextLookInMs } from "./authentication";

describe("the authentication a tab left for", () => {
  it("is remembered across the bank's round trip and shown once", () => {
    const storage = new MemoryStorage();
    const store = createAuthenticationStore(storage);
    const authentication = {
      orderId: "ord_1",
      cartId: "cart_1",
      key: "k",
      startedAt: 5,
      attempts: [],
    };

    store.remember(authentication);

    expect(createAuthenticationStore(storage).take()).toEqual(authentication);
    expect(createAuthenticationStore(storage).take()).toBeNull();
  });

  it("reads nothing from storage that holds no authentication, or none at all", () => {
    const storage = new MemoryStorage();
    storage.setItem("oncepay:authenticating", '{"orderId": 5}');
    expect(createAuthenticationStore(storage).take()).toBeNull();
    storage.setItem("oncepay:authenticating", "not json");
    expect(createAuthenticationStore(storage).take()).toBeNull();
    expect(createAuthenticationStore(null).take()).toBeNull();
  });
});

describe("awaitSettledOrder", () => {
  const order = sampleOrder("cart_1");
  const pending = { ...order, status: "pending" };

  it("reads the order until it is no longer pending, telling each look, through a failed look", async () => {
    const answers = [
      () => jsonAnswer(200, pending),
      () => Promise.reject(new Error("offline")),
      () => jsonAnswer(404, { title: "Not found", status: 404, detail: "x" }),
      () => jsonAnswer(200, order),
    ];
    const urls: string[] = [];
    const looks: number[] = [];
    const slept: number[] = [];

    const settled = await awaitSettledOrder({
      orderId: "ord_1",
      fetch: async (url) => {
        urls.push(url);
        return answers[urls.length - 1]!();
      },
      onLook: (n) => looks.push(n),
      sleep: async (ms) => void slept.push(ms),
    });

    expect(settled).toEqual(order);
    expect(urls).toEqual(Array(4).fill("/api/orders/ord_1"));
    expect(looks).toEqual([1, 2, 3]);
    expect(slept).toEqual([250, 500, 1000]);
  });

  it("stops when its signal is aborted", async () => {
    const controller = new AbortController();
    const result = await awaitSettledOrder({
      orderId: "ord_1",
      fetch: async () => jsonAnswer(200, pending),
      signal: controller.signal,
      sleep: async () => controller.abort(),
    });
    expect(result).toBeNull();
  });

  it("looks quickly at first, then every four seconds", () => {
    expect([0, 1, 2, 3, 4, 50].map(nextLookInMs)).toEqual([250, 500, 1000, 2000, 4000, 4000]);
  });
});
