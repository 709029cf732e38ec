-- Which supplier a purchase was sent to, and its reference there (VTpass: our request_id).
ALTER TABLE transactions ADD COLUMN supplier TEXT;
ALTER TABLE transactions ADD COLUMN supplier_reference TEXT;
