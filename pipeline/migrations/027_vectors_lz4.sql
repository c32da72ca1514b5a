-- The arrays of profile_vectors and baseline_vectors compressed with lz4
-- where the server has it, as 026 did for the pairs. Values written
-- before stay as they are (pglz); new ones use lz4.
--
-- Why: pglz was the largest single cost of ingest in the server. On a
-- night of 4,000 captures of 500 functions (tests/bench/night.sh), a
-- profile of the whole machine during ingest put 17% of all samples in
-- pglz_compress, 43% of the server's; with lz4 the night's ingest took
-- 15.4 and 20.2 s of CPU against 23.6 and 23.2 s, in turns on copies of
-- one database. The price is space: a capture's three arrays take about
-- 5.1 KB with lz4 against 3.6 KB with pglz (500 functions).
-- A server built without lz4 keeps pglz.

do $$
begin
	alter table profile_vectors
		alter column function_ids set compression lz4,
		alter column self_values set compression lz4,
		alter column total_values set compression lz4;
	alter table baseline_vectors
		alter column function_ids set compression lz4,
		alter column mean_share set compression lz4,
		alter column median_share set compression lz4,
		alter column mad_share set compression lz4,
		alter column ewma_share set compression lz4,
		alter column mean_vst set compression lz4,
		alter column var_vst set compression lz4,
		alter column var_floor set compression lz4,
		alter column mean_rate set compression lz4;
exception when feature_not_supported then
	null;
end
$$;
