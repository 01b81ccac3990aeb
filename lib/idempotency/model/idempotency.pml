/*
 * The idempotency protocol of lib/idempotency, as a SPIN model: three
 * concurrent attempts of one request (one Idempotency-Key), the recovery
 * worker, the reaper, lease and TTL expiry, and a crash of any attempt at any
 * step. docs/protocol-model.md maps each step to the
 * statement it stands for; change the two with the code.
 *
 * Each SQL statement is one atomic step, with its WHERE clause as written in
 * the package's sql-key-store.ts, because that is all PostgreSQL promises: between two
 * statements anything may happen. Each step also offers the crash: instead of
 * running, the process may stop for good (`:: CRASH`), which is what SIGKILL,
 * an out-of-memory kill or a lost machine look like from the database. A step
 * ends by jumping to the next one, so what an attempt decides from a result
 * is part of the step that produced it, not a state of its own.
 *
 * Broken on purpose, to show that the checks can fail (spin -a -D<name>):
 *   NO_LEASE_CHECK_ON_COMPLETE  completion matches the key by id alone
 *   NO_LEASE_CHECK_ON_RELEASE   a release deletes the key by id alone
 *   CLAIM_AFTER_CHARGE          an attempt charges, then claims
 *   REAP_STARTED_KEYS           an expired key is disposable at any recovery point
 */

#define NATTEMPTS 3
#define WORKER    (NATTEMPTS + 1)   /* the recovery worker's lease owner */
#define NOBODY    0                 /* lease_owner IS NULL */
#define NO_ROW    0                 /* ids start at 1, so 0 names no row */

/* The worker may crash or meet a provider failure this often. It restarts
 * after each (the next app instance starts its own worker), so this only
 * bounds the search: unbounded, the worker could meet a dead provider
 * forever and nothing would ever settle. Attempts need no budget: a failure
 * ends an attempt, so each fails at most once. */
#ifndef WORKER_FAULTS
#define WORKER_FAULTS 1
#endif

/* Three attempts create at most three rows (an attempt that wins an INSERT
 * never inserts again), and CLAIM_AFTER_CHARGE adds one provider key per
 * attempt. */
#define MAX_IDS 8

/* MAX_CLAIM_PASSES in the package's sql-key-store.ts */
#define MAX_CLAIM_PASSES 3

/* idempotency_keys.state (ABSENT: no row) */
#define ABSENT    0
#define IN_FLIGHT 1
#define COMPLETE  2

/* idempotency_keys.recovery_point. A checkout's claim puts the key at
 * payment_started (progressAtClaim), and the provider's answer commits with
 * the order, so a key is never at claimed or charged. */
#define NO_POINT        0   /* no row */
#define PAYMENT_STARTED 1
#define FINISHED        2

/* my_rp of an attempt whose own claim made the row: it began before every phase */
#define NEW_CLAIM 0

/* The key row of one (account, Idempotency-Key): the unique index allows one. */
byte row_state = ABSENT;
byte row_id = NO_ROW;          /* its UUID, which the model also takes as its provider key: the worst
                                  case, since paymentProviderKey names the request and the rows of one
                                  request share it (docs/stores.md, "A provider key that outlives its row") */
byte rp = NO_POINT;            /* recovery_point */
byte lease_owner = NOBODY;
bool lease_expired = false;    /* lease_expires_at <= now() */
bool ttl_expired = false;      /* expires_at <= now() */
byte next_id = 1;

/* The payment provider's ledger by provider key, and our orders table. */
byte charges[MAX_IDS];
byte total_charges = 0;
byte orders = 0;

byte attempts_ended = 0;

/* A process stops for good instead of taking this step. */
#define CRASH faults_left > 0 -> goto crashed

/* Every write after the claim: WHERE id = $keyId AND lease_owner = $leaseOwner AND state = 'in_flight' */
#define HOLDS(owner, id) (row_id == (id) && lease_owner == (owner) && row_state == IN_FLIGHT)

/* takeOverKey: WHERE id = $keyId AND state = 'in_flight' AND lease_expires_at <= now() */
#define TAKE_OVER_MATCHES(id) (row_id == (id) && row_state == IN_FLIGHT && lease_expired)

/* DISPOSABLE_WHEN_EXPIRED: complete, or never at a recovery point
 * (point_reached_at IS NULL), which a checkout's key never is */
#ifdef REAP_STARTED_KEYS
#define DISPOSABLE (row_state != ABSENT && ttl_expired && \
  (row_state == COMPLETE || lease_expired))
#else
#define DISPOSABLE (row_state != ABSENT && ttl_expired && row_state == COMPLETE)
#endif

#ifdef NO_LEASE_CHECK_ON_COMPLETE
#define MAY_COMPLETE(owner, id) (row_id == (id))
#else
#define MAY_COMPLETE(owner, id) HOLDS(owner, id)
#endif

#ifdef NO_LEASE_CHECK_ON_RELEASE
#define MAY_RELEASE(owner, id) (row_id == (id))
#else
#define MAY_RELEASE(owner, id) HOLDS(owner, id)
#endif

/* the engine's attempt (releasable): an attempt that took the key over may
 * follow one that charged; one whose claim made the row cannot. Nothing after
 * the charge needs my_rp, so the charge step clears it, as it does every
 * local once dead: two attempts that differ only in what they no longer need
 * are one state, which keeps the search small. */
#define EARLIER_MAY_HAVE_ACTED (my_rp != NEW_CLAIM)

/* Orders and payments keep their data when the key goes (ON DELETE SET NULL). */
inline delete_row() {
  row_state = ABSENT; row_id = NO_ROW; rp = NO_POINT;
  lease_owner = NOBODY; lease_expired = false; ttl_expired = false
}

/* The provider's idempotency: a provider key charges at most once, and
 * repeating it returns the first charge. So a second charge overall means
 * charges under two provider keys. */
inline provider_charges(pk) {
  if
  :: charges[pk] == 0 ->
       charges[pk] = 1; total_charges++;
       assert(total_charges <= 1)
  :: else -> skip
  fi
}

inline spend_fault() {
  if
  :: me == WORKER -> faults_left--
  :: else -> skip
  fi
}

/* The checkout's phases from a taken-over key's recovery point, as the
 * engine's attempt runs them: an in-flight key is always at payment_started. */
#define RESUME_AT_RECOVERY_POINT \
  if \
  :: my_rp == PAYMENT_STARTED -> goto charge \
  fi

/*
 * What an attempt (or the worker) does once it holds the key at
 * payment_started: the checkout's phases, then the catch block's rules in the
 * engine's attempt (release, end the lease, or neither). It leaves by
 * `goto done` or `goto crashed`; its first step is labelled charge where it
 * is used, since Promela will not take a label as the first thing in an
 * inline.
 */
inline perform_with_claim() {
  atomic {   /* charge */
    /* provider.charge({ idempotencyKey: providerKeyOf(context) }), one provider key per row here;
     * its answer is kept in memory for the completion's commit */
    if
    :: CRASH   /* before the provider heard of it */
    :: provider_charges(my_id); my_rp = 0; goto complete
    :: faults_left > 0 -> provider_charges(my_id); spend_fault(); my_rp = 0; goto end_lease   /* charged, the answer lost: SideEffectOutcomeUnknown */
    :: faults_left > 0 -> spend_fault(); my_rp = 0; goto end_lease                            /* never reached it: SideEffectOutcomeUnknown */
    :: faults_left > 0 -> spend_fault();                                                      /* refused the request itself: SideEffectRejected */
         if
         :: EARLIER_MAY_HAVE_ACTED -> my_rp = 0; goto end_lease
         :: else -> goto release   /* rejectionReleasesKey, on the attempt that claimed */
         fi
    fi
  }

complete:
  atomic {
    if
    :: CRASH   /* crash-after-charge or crash-before-commit (the answer was never written), or an error inside the transaction: it rolls back */
    /* the charged phase's commit: the order INSERT and the key UPDATE in one transaction,
     * rolled back (LeaseLostError) when the UPDATE matches no row */
    :: MAY_COMPLETE(me, my_id) ->
         orders++;
         assert(orders <= 1);
         row_state = COMPLETE; rp = FINISHED; lease_owner = NOBODY; lease_expired = false;
         goto done
    :: !MAY_COMPLETE(me, my_id) -> goto done
    fi
  }

release:
  atomic {
    if
    :: CRASH   /* or the release fails: releaseQuietly lets the lease run its course */
    /* releaseKey: DELETE … WHERE id AND lease_owner AND state = 'in_flight' */
    :: MAY_RELEASE(me, my_id) -> delete_row(); goto done
    :: !MAY_RELEASE(me, my_id) -> goto done
    fi
  }

end_lease:
  atomic {
    if
    :: CRASH   /* or it fails: endLeaseQuietly lets the lease run its course */
    /* endLease: UPDATE … SET lease_expires_at = now() WHERE id AND lease_owner AND state = 'in_flight' */
    :: HOLDS(me, my_id) -> lease_expired = true; goto done
    :: !HOLDS(me, my_id) -> goto done
    fi
  }
}

/* One HTTP attempt: engine.run → store.claim → the engine's attempt. */
proctype Attempt(byte me) {
  byte faults_left = 1;   /* never spent: see WORKER_FAULTS */
  byte pass = 0;
  byte seen_id;
  byte my_id, my_rp;

#ifdef CLAIM_AFTER_CHARGE
  atomic {
    if
    :: CRASH
    /* No key row yet, so no row id to name the charge by: a provider key of its own. */
    :: provider_charges(next_id); next_id++; goto claim
    fi
  }
#endif

/* store.claim, one pass of its loop per visit */
claim:
  atomic {
    if
    :: pass >= MAX_CLAIM_PASSES -> goto done   /* heavy churn: 409 */
    :: else -> pass++
    fi;
    if
    :: CRASH
    /* CLAIM_REACHING: INSERT … ON CONFLICT (scope, idem_key) DO NOTHING RETURNING id,
     * at payment_started with the cart, in a durable commit */
    :: row_state == ABSENT ->
         row_state = IN_FLIGHT; rp = PAYMENT_STARTED; row_id = next_id; next_id++;
         lease_owner = me; lease_expired = false; ttl_expired = false;
         my_id = row_id; my_rp = NEW_CLAIM; pass = 0;
#ifdef CLAIM_AFTER_CHARGE
         goto complete   /* it charged before it claimed */
#else
         goto admit
#endif
    :: row_state != ABSENT -> goto read_existing
    fi
  }

read_existing:
  atomic {
    /* readExisting: its own statement, so it sees what committed after the INSERT */
    if
    :: CRASH
    :: row_state == ABSENT -> goto claim   /* released or deleted in between: the next pass */
    :: row_state != ABSENT && DISPOSABLE -> seen_id = row_id; goto delete_expired
    :: row_state == COMPLETE && !DISPOSABLE -> goto done   /* replay */
    :: row_state == IN_FLIGHT && !DISPOSABLE && !lease_expired -> goto done   /* 409 */
    :: row_state == IN_FLIGHT && !DISPOSABLE && lease_expired -> seen_id = row_id; goto take_over
    fi
  }

delete_expired:
  atomic {
    if
    :: CRASH
    /* deleteExpired: the condition repeated, so a key taken over or completed meanwhile stays */
    :: row_id == seen_id && DISPOSABLE -> delete_row(); seen_id = 0; goto claim
    :: !(row_id == seen_id && DISPOSABLE) -> seen_id = 0; goto claim
    fi
  }

take_over:
  atomic {
    if
    :: CRASH
    :: TAKE_OVER_MATCHES(seen_id) ->
         lease_owner = me; lease_expired = false;
         my_id = seen_id; my_rp = rp; seen_id = 0; pass = 0;
         RESUME_AT_RECOVERY_POINT
    :: !TAKE_OVER_MATCHES(seen_id) -> seen_id = 0; goto claim   /* someone else won: the next pass */
    fi
  }

/* admitCheckout, for a new claim only: a 429, or an error in it (the
 * after-claim fault), releases the claim (admitOrRelease) */
admit:
  atomic {
    if
    :: CRASH
    :: faults_left > 0 -> goto release
    :: goto charge
    fi
  }

charge:
  perform_with_claim();

done:
crashed:
  atomic {
    attempts_ended++;
    /* Forget the locals, so ended attempts that got there differently are one state. */
    pass = 0; seen_id = 0; my_id = 0; my_rp = 0
  }
}

/*
 * recoverAbandonedKeys, run again and again: take over an in-flight key whose
 * lease ran out and resume it (a checkout's key is never one that did not
 * reach a recovery point, which the worker would release). It stops once the
 * attempts have ended and no key is in flight: everything has settled, and
 * that is where the settled property is checked.
 */
proctype RecoveryWorker() {
  byte me = WORKER;
  byte faults_left = WORKER_FAULTS;
  byte seen_id;
  byte my_id, my_rp;

top:
  if
  :: atomic {
       /* findAbandonedKeys: WHERE state = 'in_flight' AND lease_expires_at <= now() */
       row_state == IN_FLIGHT && lease_expired -> seen_id = row_id; goto worker_take_over
     }
  :: atomic {
       attempts_ended == NATTEMPTS && row_state != IN_FLIGHT ->
         /* Settled: every charge has its order. */
         assert(orders == total_charges);
         goto finished
     }
  fi;

worker_take_over:
  atomic {
    if
    :: CRASH
    :: TAKE_OVER_MATCHES(seen_id) ->
         lease_owner = me; lease_expired = false;
         my_id = seen_id; my_rp = rp; seen_id = 0;
         RESUME_AT_RECOVERY_POINT   /* engine.resume */
    :: !TAKE_OVER_MATCHES(seen_id) -> seen_id = 0; goto top   /* a retry got there first */
    fi
  }

charge:
  perform_with_claim();

done:
  atomic { my_id = 0; my_rp = 0; goto top }
crashed:
  /* That instance died; the next one's worker starts from the top. */
  atomic { faults_left--; seen_id = 0; my_id = 0; my_rp = 0; goto top }
finished:
  skip
}

/* reapExpiredKeys: DELETE … WHERE DISPOSABLE_WHEN_EXPIRED … FOR UPDATE SKIP LOCKED */
proctype Reaper() {
end:
  do
  :: atomic { DISPOSABLE -> delete_row() }
  od
}

/*
 * Time passes. Any lease may run out at any moment, whether or not its holder
 * is alive (a stalled attempt is a live one whose lease ran out). The TTL
 * (24 h) passes only once every attempt has ended: clients stop retrying
 * within 60 s (docs/browser-client.md), and a request after the TTL
 * is a new one, which may rightly be charged again.
 */
proctype Clock() {
end:
  do
  :: atomic { row_state == IN_FLIGHT && !lease_expired -> lease_expired = true }
  :: atomic { row_state != ABSENT && !ttl_expired && attempts_ended == NATTEMPTS -> ttl_expired = true }
  od
}

init {
  atomic {
    run Attempt(1); run Attempt(2); run Attempt(3);
    run RecoveryWorker(); run Reaper(); run Clock()
  }
}
