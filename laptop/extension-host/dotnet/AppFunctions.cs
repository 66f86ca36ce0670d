using System.Reflection;
using System.Reflection.Emit;
using Microsoft.Azure.WebJobs;
using Microsoft.Azure.WebJobs.Extensions.DurableTask;
using Newtonsoft.Json.Linq;

namespace Sas.ExtensionHost;

/// <summary>One of the app's durable functions, as the worker captured its registration.</summary>
public sealed record FunctionSpec(string Name, string Kind, bool DurableClient)
{
    public static FunctionSpec From(JToken json) => new(
        (string?)json["name"] ?? throw new InvalidOperationException("a function without a name"),
        (string?)json["kind"] ?? throw new InvalidOperationException($"function {json["name"]} has no kind"),
        (bool?)json["durableClient"] ?? false);
}

/// <summary>
/// The app's durable functions as a type the WebJobs SDK indexes, emitted at start from the functions
/// the worker registered, as the Functions host emits one for a script app's functions: one static
/// method per function, with the trigger attribute the extension binds (a string orchestration
/// trigger, which makes the orchestrator out-of-proc; an activity context; the durable client's
/// binding data as a string; a string entity trigger, which makes the entity out-of-proc too), each
/// calling <see cref="Invocations"/> with its name.
/// </summary>
public static class AppFunctions
{
    public static Type Emit(IReadOnlyList<FunctionSpec> functions)
    {
        var assembly = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("SasAppFunctions"), AssemblyBuilderAccess.Run);
        var module = assembly.DefineDynamicModule("SasAppFunctions");
        var type = module.DefineType(
            "SasAppFunctions.Functions",
            TypeAttributes.Public | TypeAttributes.Abstract | TypeAttributes.Sealed | TypeAttributes.Class);
        for (int i = 0; i < functions.Count; i++) DefineStub(type, $"F{i}", functions[i]);
        return type.CreateType();
    }

    private static void DefineStub(TypeBuilder type, string methodName, FunctionSpec function)
    {
        (Type returnType, Type[] parameters, Type trigger, string call) = function.Kind switch
        {
            "orchestration" => (typeof(Task<object?>), new[] { typeof(string) }, typeof(OrchestrationTriggerAttribute), nameof(Invocations.Orchestrate)),
            "entity" => (typeof(Task<object?>), new[] { typeof(string) }, typeof(EntityTriggerAttribute), nameof(Invocations.RunEntity)),
            "activity" when function.DurableClient => (typeof(Task<object?>), new[] { typeof(IDurableActivityContext), typeof(string) }, typeof(ActivityTriggerAttribute), nameof(Invocations.ActivityWithClient)),
            "activity" => (typeof(Task<object?>), new[] { typeof(IDurableActivityContext) }, typeof(ActivityTriggerAttribute), nameof(Invocations.Activity)),
            _ => throw new InvalidOperationException($"function {function.Name}: a {function.Kind} function is not run on the extension here"),
        };
        var method = type.DefineMethod(methodName, MethodAttributes.Public | MethodAttributes.Static, returnType, parameters);
        method.SetCustomAttribute(Attribute(typeof(FunctionNameAttribute), function.Name));
        method.DefineParameter(1, ParameterAttributes.None, "context").SetCustomAttribute(Attribute(trigger));
        if (parameters.Length > 1)
            method.DefineParameter(2, ParameterAttributes.None, "client").SetCustomAttribute(Attribute(typeof(DurableClientAttribute)));

        ILGenerator il = method.GetILGenerator();
        il.Emit(OpCodes.Ldstr, function.Name);
        for (short i = 0; i < parameters.Length; i++) il.Emit(OpCodes.Ldarg, i);
        il.Emit(OpCodes.Call, typeof(Invocations).GetMethod(call)!);
        il.Emit(OpCodes.Ret);
    }

    private static CustomAttributeBuilder Attribute(Type attribute, params string[] arguments) =>
        new(attribute.GetConstructor(arguments.Select(_ => typeof(string)).ToArray())!, arguments.Cast<object>().ToArray());
}

/// <summary>The types the WebJobs SDK indexes: the emitted functions and this host's own.</summary>
public sealed class FixedTypeLocator(params Type[] types) : ITypeLocator
{
    public IReadOnlyList<Type> GetTypes() => types;
}
