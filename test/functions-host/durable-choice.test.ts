import { describe, expect, it } from "vitest";
import { newestSdk } from "../../laptop/extension-host/dotnet-sdk.js";
import { chooseDurableEngine } from "../../laptop/functions-host/durable-choice.js";

const withSdk = () => ({ found: true as const, version: "10.0.401" });
const withoutSdk = () => ({ found: false as const, why: "no dotnet command (spawn dotnet ENOENT)" });

describe("sas host's durable engine", () => {
  it("is Microsoft's extension by default where a .NET SDK 8 or later is installed, and says so first", () => {
    expect(chooseDurableEngine(undefined, withSdk)).toEqual({
      engine: "extension",
      line: "sas host: durable engine: Microsoft's Durable Task extension, on .NET SDK 10.0.401 (--durable local for the local durable runtime)",
    });
  });

  it("is the local runtime without one, in one line saying why", () => {
    const choice = chooseDurableEngine(undefined, withoutSdk);
    expect(choice).toMatchObject({ engine: "local" });
    expect("line" in choice && choice.line).toBe(
      "sas host: durable engine: the local durable runtime, since no .NET SDK 8 or later is here (no dotnet command (spawn dotnet ENOENT)); with one, Microsoft's Durable Task extension",
    );
  });

  it("is the local runtime with --durable local, without looking for .NET", () => {
    const choice = chooseDurableEngine("local", () => {
      throw new Error("looked for .NET");
    });
    expect(choice).toMatchObject({ engine: "local" });
  });

  it("refuses --durable extension without an SDK, and an engine it does not know", () => {
    expect(chooseDurableEngine("extension", withoutSdk)).toEqual({
      refused: "--durable extension needs the .NET SDK 8 or later: no dotnet command (spawn dotnet ENOENT)",
    });
    expect(chooseDurableEngine("netherite", withSdk)).toEqual({
      refused: "--durable netherite: give extension or local",
    });
  });

  it("reads the newest SDK from dotnet --list-sdks, and refuses one older than 8", () => {
    const listing =
      "6.0.428 [/usr/share/dotnet/sdk]\n10.0.401 [/usr/share/dotnet/sdk]\n8.0.414 [/usr/share/dotnet/sdk]\n";
    expect(newestSdk(listing)).toEqual({ found: true, version: "10.0.401" });
    expect(newestSdk("7.0.410 [/usr/share/dotnet/sdk]\n")).toEqual({
      found: false,
      why: "the newest .NET SDK is 7.0.410, older than 8",
    });
    expect(newestSdk("")).toEqual({ found: false, why: "dotnet lists no SDK" });
  });
});
