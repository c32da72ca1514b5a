module profreg.test/gen/pprof

go 1.19
