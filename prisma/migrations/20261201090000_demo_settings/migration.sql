-- CreateTable
CREATE TABLE "demo_settings" (
    "account_id" UUID NOT NULL,
    "network_delay_ms" INTEGER NOT NULL DEFAULT 0,
    "lose_response" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "demo_settings_pkey" PRIMARY KEY ("account_id")
);

-- AddForeignKey
ALTER TABLE "demo_settings" ADD CONSTRAINT "demo_settings_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
