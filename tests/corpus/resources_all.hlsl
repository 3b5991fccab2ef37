// Every resource type of the format, one of each, all used by one compute kernel.
// (tbuffer is in tbuffer.hlsl: Slang cannot emit it for SPIR-V; input attachments, pixel-only, in subpass.hlsl.) Typed buffers, 1D-array, multisampled-array and cube-array textures and append/consume buffers
// do not exist in WGSL, so this file builds for SPIR-V and Metal only.
struct Elem
{
    float4 Value;
    uint Key;
    float3 Extra;
};

cbuffer Block { float4 BlockValue; uint BlockCount; float3 BlockPad; };
struct CbData { float4 A; float4 B; };
ConstantBuffer<CbData> TypedBlock;
Buffer<float4> TypedBuf;
RWBuffer<uint> RWTypedBuf;
StructuredBuffer<Elem> Structured;
RWStructuredBuffer<Elem> RWStructured;
AppendStructuredBuffer<uint> Appended;
ConsumeStructuredBuffer<uint> Consumed;
ByteAddressBuffer Raw;
RWByteAddressBuffer RWRaw;
Texture1D<float4> Tex1D;
Texture1DArray<float4> Tex1DArray;
Texture2D<float4> Tex2D;
Texture2DArray<float4> Tex2DArray;
Texture2DMS<float4> Tex2DMS;
Texture2DMSArray<float4> Tex2DMSArray;
Texture3D<float4> Tex3D;
TextureCube<float4> TexCube;
TextureCubeArray<float4> TexCubeArray;
[[vk::image_format("rgba32f")]] RWTexture1D<float4> RWTex1D;
[[vk::image_format("rgba32f")]] RWTexture1DArray<float4> RWTex1DArray;
[[vk::image_format("r32f")]] RWTexture2D<float> RWTex2D;
[[vk::image_format("rgba16f")]] RWTexture2DArray<float4> RWTex2DArray;
[[vk::image_format("r32ui")]] RWTexture3D<uint> RWTex3D;
SamplerState Linear;
SamplerComparisonState Shadow;

[shader("compute")]
[numthreads(1, 1, 1)]
void UseAll(uint3 id : SV_DispatchThreadID)
{
    float4 acc = BlockValue + TypedBlock.A + TypedBlock.B + TypedBuf[id.x];
    acc += Structured[id.x].Value + float4(Structured[id.x].Extra, 0.0);
    acc += asfloat(Raw.Load4(id.x * 16));
    acc += Tex1D.SampleLevel(Linear, 0.5, 0.0);
    acc += Tex1DArray.SampleLevel(Linear, float2(0.5, 0.0), 0.0);
    acc += Tex2D.SampleLevel(Linear, float2(0.5, 0.5), 0.0);
    acc += Tex2DArray.SampleLevel(Linear, float3(0.5, 0.5, 0.0), 0.0);
    acc += Tex2DMS.Load(int2(id.xy), 0);
    acc += Tex2DMSArray.Load(int3(id.xy, 0), 0);
    acc += Tex3D.SampleLevel(Linear, float3(0.5, 0.5, 0.5), 0.0);
    acc += TexCube.SampleLevel(Linear, float3(0.0, 0.0, 1.0), 0.0);
    acc += TexCubeArray.SampleLevel(Linear, float4(0.0, 0.0, 1.0, 0.0), 0.0);
    acc.x += Tex2D.SampleCmpLevelZero(Shadow, float2(0.5, 0.5), 0.5);
    acc.x += float(Consumed.Consume() + BlockCount);
    RWTypedBuf[id.x] = uint(acc.x);
    Elem e;
    e.Value = acc;
    e.Key = id.x;
    e.Extra = acc.xyz;
    RWStructured[id.x] = e;
    Appended.Append(id.x);
    RWRaw.Store(id.x * 4, asuint(acc.y));
    RWTex1D[id.x] = acc;
    RWTex1DArray[uint2(id.x, 0)] = acc;
    RWTex2D[id.xy] = acc.z;
    RWTex2DArray[uint3(id.xy, 0)] = acc;
    RWTex3D[id] = uint(acc.w);
}
