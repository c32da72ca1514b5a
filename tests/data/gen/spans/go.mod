module profreg.test/spangen

go 1.19
