import { cookies } from "next/headers";
import { findSessionAccount } from "@/lib/auth/accounts";
import { SESSION_COOKIE } from "@/lib/auth/session-cookie";
import { getServices } from "@/lib/services";

/** The account of the browser viewing a page, if it has one yet (it is made on its first API call). */
export async function pageAccount(): Promise<string | undefined> {
  const token = (await cookies()).get(SESSION_COOKIE)?.value;
  return findSessionAccount(getServices().db, token);
}
