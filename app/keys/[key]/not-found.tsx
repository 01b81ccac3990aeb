import { NotFoundPage } from "@/components/shop/NotFoundPage";

export default function KeyNotFound() {
  return (
    <NotFoundPage current="key" title="No such key">
      <p data-testid="key-not-found">
        This browser has no Idempotency-Key by that name. Keys belong to the browser that sent them,
        and each is deleted a day after it was first sent.
      </p>
    </NotFoundPage>
  );
}
