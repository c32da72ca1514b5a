-- A baseline's per-function summaries as one row, as 024 did for a
-- capture's values: baseline_vectors holds each baseline's function ids
-- and, at the same places, each function's summary. It replaces the
-- table baseline_functions, one row per baseline and function.
--
-- Why: every analysis stores the baseline it used, and a night of 1,000
-- services with three profile types wrote 1.5 million of those rows,
-- each checked against functions and entered in a key: about a quarter
-- of the database's time in the night's analysis. Nothing reads them in
-- bulk; they are the record of what each finding was compared with.
--
-- baseline_functions stays, as a view with the same columns, running
-- with the reader's rights (the row security of baselines applies).

create table baseline_vectors (
	baseline_id bigint primary key references baselines (id) on delete cascade,
	n int not null,
	function_ids bigint[] not null,
	mean_share float8[] not null,
	median_share float8[] not null,
	mad_share float8[] not null,
	ewma_share float8[] not null,
	mean_vst float8[] not null,
	var_vst float8[] not null,      -- null elements where unknown
	var_floor float8[] not null,
	mean_rate float8[] not null,    -- null elements where unknown
	check (cardinality(mean_share) = cardinality(function_ids)
	       and cardinality(median_share) = cardinality(function_ids)
	       and cardinality(mad_share) = cardinality(function_ids)
	       and cardinality(ewma_share) = cardinality(function_ids)
	       and cardinality(mean_vst) = cardinality(function_ids)
	       and cardinality(var_vst) = cardinality(function_ids)
	       and cardinality(var_floor) = cardinality(function_ids)
	       and cardinality(mean_rate) = cardinality(function_ids))
);

-- One baseline's rows all carry the same n (the baseline's captures).
insert into baseline_vectors
select baseline_id, min(n), array_agg(function_id order by function_id),
       array_agg(mean_share order by function_id), array_agg(median_share order by function_id),
       array_agg(mad_share order by function_id), array_agg(ewma_share order by function_id),
       array_agg(mean_vst order by function_id), array_agg(var_vst order by function_id),
       array_agg(var_floor order by function_id), array_agg(mean_rate order by function_id)
  from baseline_functions group by baseline_id;

create temporary table profreg_025_grants on commit drop as
	select grantee, privilege_type from information_schema.role_table_grants
	 where table_schema = current_schema() and table_name = 'baseline_functions'
	   and grantee <> current_user;

alter table baseline_vectors enable row level security;
create policy baseline_vectors_team on baseline_vectors
	using (baseline_id in (select b.id from baselines b))
	with check (baseline_id in (select b.id from baselines b));

drop table baseline_functions;

create view baseline_functions with (security_invoker = true) as
select v.baseline_id, u.function_id, v.n, u.mean_share, u.median_share, u.mad_share,
       u.ewma_share, u.mean_vst, u.var_vst, u.var_floor, u.mean_rate
  from baseline_vectors v
 cross join lateral unnest(v.function_ids, v.mean_share, v.median_share, v.mad_share,
			   v.ewma_share, v.mean_vst, v.var_vst, v.var_floor, v.mean_rate)
       as u(function_id, mean_share, median_share, mad_share, ewma_share, mean_vst, var_vst,
	    var_floor, mean_rate);

do $$
declare
	g record;
begin
	for g in select * from profreg_025_grants loop
		execute format('grant %s on baseline_vectors to %I', g.privilege_type, g.grantee);
		if g.privilege_type = 'SELECT' then
			execute format('grant select on baseline_functions to %I', g.grantee);
		end if;
	end loop;
end $$;
