-- Lane breakers share destination_holds with destinations gone for good:
-- a row with until_us set is a breaker, open until then, whose backoff
-- grows with failures (the attempts in a row that found its destination
-- unreachable); a probe moves until_us forward while it runs, so that one
-- process probes. until_us 0 is still a destination gone until released.

-- +goose Up
ALTER TABLE destination_holds ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE destination_holds DROP COLUMN failures;
