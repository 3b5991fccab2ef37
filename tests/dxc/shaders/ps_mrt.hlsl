// Multiple render targets: SV_TargetN is location N; other varyings get locations in
// declaration order (TEXCOORD5 is location 1, not 5).
Texture2D gAlbedo : register(t0);
SamplerState gSampler : register(s0);

struct PSInput
{
    float4 position : SV_Position;
    float2 uv : TEXCOORD0;
    float3 normal : TEXCOORD5;
};

struct PSOutput
{
    float4 albedo : SV_Target0;
    float4 normal : SV_Target2;
};

PSOutput main(PSInput input)
{
    PSOutput o;
    o.albedo = gAlbedo.Sample(gSampler, input.uv);
    o.normal = float4(normalize(input.normal) * 0.5 + 0.5, 1.0);
    return o;
}
