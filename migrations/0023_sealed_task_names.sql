-- A task whose name the command line that started it sealed (a `s1.…` text, its scope the task's
-- id): `name` is then empty.
ALTER TABLE tasks ADD COLUMN sealed_name TEXT;
