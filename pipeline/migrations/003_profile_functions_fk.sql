-- Interned functions are never deleted, so the per-row foreign-key check
-- from profile_functions to functions guards nothing and costs about half
-- of the time of storing a capture's function rows. The check against
-- profiles stays: retention deletes captures and the rows go with them.
alter table profile_functions drop constraint if exists profile_functions_function_id_fkey;
