-- 008_functions_synthetic: find the synthetic functions without a scan.
--
-- Every baseline load and every retention batch asks for the synthetic
-- "(other functions)" rows; with tens of thousands of functions a scan
-- per question cost as much as the analysis itself.
create index functions_synthetic on functions (id) where synthetic;
