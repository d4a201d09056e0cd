CREATE TABLE IF NOT EXISTS orders (
    id        varchar(64)    PRIMARY KEY,
    customer  varchar(64)    NOT NULL,
    amount    numeric(12, 2) NOT NULL,
    placed_at timestamp      NOT NULL
);
