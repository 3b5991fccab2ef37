// A G-buffer pass as DXC-era code writes it: the pixel shader's input struct places its
// members with [[vk::location(n)]] and its output struct has members of the same names
// (Normal) written to SV_TARGET0..2; each output goes to the attachment of its index.
struct VSInput
{
    [[vk::location(0)]] float3 Pos : POSITION0;
    [[vk::location(1)]] float3 Normal : NORMAL0;
    [[vk::location(2)]] float2 UV : TEXCOORD0;
};

struct VSOutput
{
    float4 Pos : SV_POSITION;
    [[vk::location(0)]] float3 Normal : NORMAL0;
    [[vk::location(1)]] float2 UV : TEXCOORD0;
    [[vk::location(2)]] float3 WorldPos : POSITION1;
};

struct FSOutput
{
    float4 Position : SV_TARGET0;
    float4 Normal : SV_TARGET1;
    float4 Albedo : SV_TARGET2;
};

Texture2D albedoMap : register(t1);
SamplerState albedoSampler : register(s1);

[shader("vertex")]
VSOutput VSMain(VSInput input)
{
    VSOutput output;
    output.Pos = float4(input.Pos, 1.0);
    output.Normal = input.Normal;
    output.UV = input.UV;
    output.WorldPos = input.Pos;
    return output;
}

[shader("pixel")]
FSOutput PSMain(VSOutput input)
{
    FSOutput output;
    output.Position = float4(input.WorldPos, 1.0);
    output.Normal = float4(normalize(input.Normal), 1.0);
    output.Albedo = albedoMap.Sample(albedoSampler, input.UV);
    return output;
}
