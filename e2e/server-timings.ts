/**
 * The e2e app's lease (IDEMPOTENCY_LEASE_SECONDS) and the lab's key expiry
 * (LAB_KEY_EXPIRY_SECONDS), shorter than the defaults (30 s, 20 s): the
 * lab's crash runs wait them out, so they take half as long. The lease still
 * outlasts the longest hold a demo asks of the server (12 s), and the crash
 * runs still end in order: the broken designs at once, the copied ones at
 * their expiry, OncePay's at its lease, 10 s later.
 */
export const E2E_LEASE_SECONDS = 15;
export const E2E_LAB_KEY_EXPIRY_SECONDS = 5;
