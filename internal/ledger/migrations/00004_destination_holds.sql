-- Destinations an outlet must not send to: a webhook whose receiver
-- answered 410 Gone, closed until its URL changes or an operator reopens
-- it (watchdogd episodes retry). Keyed by the outlet and the destination's
-- key, which names no URL (a webhook's may hold a token): its name and a
-- hash of its URL. until_us 0 holds until released.

-- +goose Up
CREATE TABLE destination_holds (
  outlet      TEXT NOT NULL,
  destination TEXT NOT NULL,
  reason      TEXT NOT NULL,
  since_us    BIGINT NOT NULL,
  until_us    BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (outlet, destination)
);

-- +goose Down
DROP TABLE destination_holds;
