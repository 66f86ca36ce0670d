-- The Function App's managed identity as a contained database user, with the roles it needs: the app
-- applies its own schema migrations at start-up (src/adapters/sql/statements.ts), hence db_ddladmin.
--
-- The user is created from the identity's client id (WITH SID ..., TYPE = E), not FROM EXTERNAL PROVIDER:
-- no directory lookup, so a service principal can run this without the server holding Directory Readers.
-- Safe to run on every provision: an existing user is kept, so the running app is never cut off; only a
-- user left by an earlier app of the same name (another identity) is replaced. Roles are added if missing.
DECLARE @sid varbinary(16) = CONVERT(varbinary(16), CONVERT(uniqueidentifier, N'$(APP_CLIENT_ID)'));
DECLARE @statement nvarchar(max);

IF EXISTS (SELECT 1 FROM sys.database_principals WHERE name = N'$(APP_NAME)' AND sid <> @sid)
BEGIN
  SET @statement = N'DROP USER ' + QUOTENAME(N'$(APP_NAME)');
  EXEC (@statement);
END

-- CREATE USER takes the SID as a literal only, hence the dynamic statement.
IF NOT EXISTS (SELECT 1 FROM sys.database_principals WHERE name = N'$(APP_NAME)')
BEGIN
  SET @statement = N'CREATE USER ' + QUOTENAME(N'$(APP_NAME)') + N' WITH SID = ' + CONVERT(nvarchar(34), @sid, 1) + N', TYPE = E';
  EXEC (@statement);
END

IF IS_ROLEMEMBER(N'db_datareader', N'$(APP_NAME)') = 0
  ALTER ROLE db_datareader ADD MEMBER [$(APP_NAME)];
IF IS_ROLEMEMBER(N'db_datawriter', N'$(APP_NAME)') = 0
  ALTER ROLE db_datawriter ADD MEMBER [$(APP_NAME)];
IF IS_ROLEMEMBER(N'db_ddladmin', N'$(APP_NAME)') = 0
  ALTER ROLE db_ddladmin ADD MEMBER [$(APP_NAME)];
GO
