module profreg.test/gen/goroutine

go 1.19
