-- The Function App's managed identity as a contained database user. Recreated on every provision, so that
-- it maps to the identity the app has now (a recreated app has a new identity under the same name). The
-- app applies its own schema migrations at start-up (src/adapters/sql/statements.ts), hence db_ddladmin.
IF EXISTS (SELECT 1 FROM sys.database_principals WHERE name = N'$(APP_NAME)')
  DROP USER [$(APP_NAME)];
GO
CREATE USER [$(APP_NAME)] FROM EXTERNAL PROVIDER WITH OBJECT_ID = '$(APP_PRINCIPAL_ID)';
ALTER ROLE db_datareader ADD MEMBER [$(APP_NAME)];
ALTER ROLE db_datawriter ADD MEMBER [$(APP_NAME)];
ALTER ROLE db_ddladmin ADD MEMBER [$(APP_NAME)];
GO
