-- A purchase is one cart paid for: the orders of one (account, cart id).
-- The ledger and GET /api/purchases/{cartId} read a purchase's orders by
-- them; without this index each read scans all of the account's orders.
CREATE INDEX "orders_account_id_cart_id_idx" ON "orders"("account_id", "cart_id");
