import type { Metadata } from "next";
import { NotFoundPage } from "@/components/shop/NotFoundPage";

export const metadata: Metadata = { title: "Page not found · OncePay Coffee Supply" };

/** Every path no page or route answers: Next.js serves this with status 404. */
export default function NotFound() {
  return (
    <NotFoundPage title="No page here">
      <p>Nothing lives at this address. The link may be mistyped, or the page may have moved.</p>
    </NotFoundPage>
  );
}
